// The git resolver on a service runtime: the git binary checked, its object
// cache (QUARRY_GIT_CACHE_DIR) and metrics, Secrets read with the runtime's
// client. Used by main.ts and by any process that hosts it beside other
// resolvers.
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ServiceRuntime } from "@quarry/kube";
import type { HostedResolver } from "@quarry/resolver-sdk";
import { CONFIG_MAP_NAME } from "./config.ts";
import { checkGitVersion } from "./engine/git/git-process.ts";
import { GitCliSource } from "./engine/git-cli-source.ts";
import { registerGitMetrics } from "./metrics.ts";
import { kubeSecretReader } from "./policy/secrets.ts";
import { GitResolver } from "./resolver.ts";

/**
 * Workers when QUARRY_CONCURRENCY is not set (the chart sets it: `concurrency`, 128 for this
 * service, 32 for the all-in-one process). A git resolution mostly waits, on the server or on a batch of blobs being fetched,
 * and batching only gathers the requests in flight: with 8 workers a burst of first reads
 * fetched at most 8 blobs at a time (docs/performance.md, "Under bursts").
 */
export const GIT_RESOLVER_CONCURRENCY = 128;

export async function gitResolver(runtime: ServiceRuntime): Promise<GitResolver> {
  if (process.env.QUARRY_CONCURRENCY === undefined) {
    runtime.settings.concurrency = Math.max(runtime.settings.concurrency, GIT_RESOLVER_CONCURRENCY);
  }
  const gitVersion = await checkGitVersion();
  const cacheRoot = process.env.QUARRY_GIT_CACHE_DIR || join(tmpdir(), "quarry-git-cache");
  const source = new GitCliSource({ cacheRoot, log: runtime.log.child({ component: "git" }) });
  registerGitMetrics(runtime.metrics.meter, source);
  runtime.log.info({ gitVersion, cacheRoot, workers: runtime.settings.concurrency }, "git engine ready");
  return new GitResolver({
    source,
    readSecret: kubeSecretReader(runtime.client),
    systemNamespace: runtime.settings.systemNamespace,
  });
}

/** The git resolver with its ConfigMap, as runResolvers and wireResolvers host it. */
export async function wireGitResolver(runtime: ServiceRuntime): Promise<HostedResolver> {
  return { resolver: await gitResolver(runtime), configMap: CONFIG_MAP_NAME };
}
