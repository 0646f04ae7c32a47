// A process hosting the pipe and the git resolver on one ServiceRuntime and
// one controller (runResolvers): one work queue and QUARRY_CONCURRENCY workers
// for both, built from the services' own wiring. pipe-load runs it with 2
// workers to show that pipe pods never hold a worker a git request needs.
// Run as a real process (harness/service.ts, `entry`) under the union of both
// charts' RBAC.

import { CONFIG_MAP_NAME as GIT_CONFIG } from "@quarry/git-resolver/config";
import { gitResolver } from "@quarry/git-resolver/wiring";
import { ServiceRuntime } from "@quarry/kube";
import { CONFIG_MAP_NAME as PIPE_CONFIG } from "@quarry/pipe-resolver/config";
import { pipeResolver } from "@quarry/pipe-resolver/wiring";
import { runResolvers } from "@quarry/resolver-sdk";

const runtime = new ServiceRuntime("pipe-git-resolver");
await runResolvers(
  [
    { resolver: pipeResolver(runtime), configMap: PIPE_CONFIG },
    { resolver: await gitResolver(runtime), configMap: GIT_CONFIG },
  ],
  { runtime },
);
