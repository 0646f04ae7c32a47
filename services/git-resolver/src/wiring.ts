// The git resolver on a service runtime: the git binary checked, its object
// cache (QUARRY_GIT_CACHE_DIR) and metrics, Secrets read with the runtime's
// client. Used by main.ts and by any process that hosts it beside other
// resolvers.
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ServiceRuntime } from "@quarry/kube";
import { GitCliSource } from "./git-cli-source.ts";
import { checkGitVersion } from "./git-process.ts";
import { registerGitMetrics } from "./metrics.ts";
import { GitResolver } from "./resolver.ts";
import { kubeSecretReader } from "./secrets.ts";

export async function gitResolver(runtime: ServiceRuntime): Promise<GitResolver> {
  const gitVersion = await checkGitVersion();
  const cacheRoot = process.env.QUARRY_GIT_CACHE_DIR || join(tmpdir(), "quarry-git-cache");
  const source = new GitCliSource({ cacheRoot, log: runtime.log.child({ component: "git" }) });
  registerGitMetrics(runtime.metrics.meter, source);
  runtime.log.info({ gitVersion, cacheRoot }, "git engine ready");
  return new GitResolver({ source, readSecret: kubeSecretReader(runtime.client) });
}
