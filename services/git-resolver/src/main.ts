// git-resolver: files from git repositories. Wiring only.
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ServiceRuntime } from "@quarry/kube";
import { runResolver } from "@quarry/resolver-sdk";
import { CONFIG_MAP_NAME } from "./config.ts";
import { GitCliSource } from "./git-cli-source.ts";
import { checkGitVersion } from "./git-process.ts";
import { registerGitMetrics } from "./metrics.ts";
import { GitResolver } from "./resolver.ts";
import { kubeSecretReader } from "./secrets.ts";

const runtime = new ServiceRuntime("git-resolver");
const gitVersion = await checkGitVersion();
const cacheRoot = process.env.QUARRY_GIT_CACHE_DIR || join(tmpdir(), "quarry-git-cache");
const source = new GitCliSource({ cacheRoot, log: runtime.log.child({ component: "git" }) });
registerGitMetrics(runtime.metrics.meter, source);
runtime.log.info({ gitVersion, cacheRoot }, "git engine ready");
await runResolver(new GitResolver({ source, readSecret: kubeSecretReader(runtime.client) }), {
  configMap: CONFIG_MAP_NAME,
  runtime,
});
