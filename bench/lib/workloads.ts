// The workloads the resolver benchmarks share, so that two benchmarks that say
// "the cluster workload" or "the git workload" run the same one:
//
// - cluster: --tasks Tasks in the namespace, request i asks for Task i mod --tasks;
// - git: a generated repository `bench.git` on the fixture smart-HTTP server
//   (--files Task files `tasks/t-NNNNN.yaml` on top of --bulk-mb MB of 16 KiB
//   source-like files with 20 commits of history), request i reads file
//   i mod --files; warm-ups read a separate one-file repository `warmup.git`.
import { join } from "node:path";
import { LABEL_RESOLVER_TYPE, type ResolutionRequest } from "@quarry/api";
import { applyObject } from "@quarry/devcluster/apply";
import type { AccessEntry, GitServer } from "@quarry/devcluster/git-server";
import { newRequest, type Scenario, setConfig, taskManifest } from "@quarry/harness/scenario";
import type { KubeClient } from "@quarry/kube";
import { commitFiles, fastImport, historyCommits, initBare, taskYaml } from "./git-repo.ts";
import { log } from "./run.ts";

/** The cluster workload's Task names: request i asks for clusterTaskName(i, tasks). */
const clusterTaskName = (i: number, tasks: number): string =>
  `bench-task-${String(i % tasks).padStart(3, "0")}`;

/** Applies the workload's Tasks to `namespace` (before the resolver starts, so its informer serves them all). */
export async function applyClusterTasks(admin: KubeClient, namespace: string, tasks: number): Promise<void> {
  for (let i = 0; i < tasks; i++)
    await applyObject(admin, taskManifest(namespace, clusterTaskName(i, tasks)));
}

/** Request `name` of the cluster workload: kind=task, the i-th Task. */
export function clusterRequest(namespace: string, name: string, i: number, tasks: number): ResolutionRequest {
  return newRequest(
    namespace,
    name,
    { [LABEL_RESOLVER_TYPE]: "cluster" },
    { kind: "task", name: clusterTaskName(i, tasks) },
  );
}

/** bench.git (`bare` on disk, for commits a benchmark adds; `c1`: main's first commit) and warmup.git. */
export type GitWorkload = Awaited<ReturnType<typeof buildGitWorkload>>;

/** Builds bench.git and warmup.git in the server's root. */
export async function buildGitWorkload(server: GitServer, opts: { files: number; bulkMb: number }) {
  const { files } = opts;
  const taskPath = (i: number) => `tasks/t-${String(i % files).padStart(5, "0")}.yaml`;
  const bare = join(server.root, "bench.git");
  const bulkFiles = Math.round((opts.bulkMb * 1024) / 16);
  log(`building bench.git: ${files} Task files, ${bulkFiles} files of 16 KiB with 20 commits of history`);
  await initBare(bare);
  const bulk = { files: bulkFiles, fileBytes: 16 * 1024, commits: 20, filesPerCommit: 10, dir: "bulk" };
  if (bulkFiles > 0) await fastImport(bare, historyCommits(bulk));
  const tasks: Record<string, string> = {};
  for (let i = 0; i < files; i++) tasks[taskPath(i)] = taskYaml(`t-${i}`, "v1");
  const c1 = await commitFiles(bare, "main", tasks, "tasks", bulkFiles > 0 ? undefined : "");
  const warmUrl = await buildWarmupRepo(server);
  return { bare, url: server.url("bench.git"), warmUrl, c1, files, bulkFiles, taskPath };
}

/** warmup.git in the server's root: one commit with one Task at `task.yaml`; returns its URL. */
export async function buildWarmupRepo(server: GitServer): Promise<string> {
  const warmBare = join(server.root, "warmup.git");
  await initBare(warmBare);
  await commitFiles(warmBare, "main", { "task.yaml": taskYaml("warm-up") }, "warm-up", "");
  return server.url("warmup.git");
}

/** git-resolver-config's `allowed-urls` for the fixture server's repositories only. */
export const allowedUrls = (server: GitServer): string =>
  `${server.baseUrl.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/.*`;

/**
 * The git namespace's ConfigMaps: the resolver may fetch from the fixture server only (plus any
 * other `gitConfig` keys, e.g. a benchmark's A/B of `ref-lookup-interval`), and the
 * lifecycle controller's global timeout is `lifecycleTimeout`, so a burst's backlog is measured
 * rather than cut off at Tekton's 1m.
 */
export async function configureGitNamespace(
  scn: Scenario,
  server: GitServer,
  lifecycleTimeout: string,
  gitConfig: Record<string, string> = {},
): Promise<void> {
  await setConfig(scn, "git-resolver-config", { "allowed-urls": allowedUrls(server), ...gitConfig });
  await setConfig(scn, "lifecycle-controller-config", {
    "default-maximum-resolution-timeout": lifecycleTimeout,
  });
}

/** Request `name` of the git workload: the i-th file at `revision` (warm-ups: warmup.git's one file). */
export function gitRequest(
  w: GitWorkload,
  namespace: string,
  name: string,
  i: number,
  opts: { revision?: string; cache?: string; warm?: boolean } = {},
): ResolutionRequest {
  const cache = opts.cache ?? "never";
  const params = opts.warm
    ? { url: w.warmUrl, revision: "main", pathInRepo: "task.yaml", cache: "never" }
    : { url: w.url, revision: opts.revision ?? "main", pathInRepo: w.taskPath(i), cache };
  return newRequest(namespace, name, { [LABEL_RESOLVER_TYPE]: "git" }, params);
}

/** What the git server answered in a window, by kind: "GET info/refs", "POST ls-refs", "POST fetch". */
export function gitServerRequests(entries: readonly AccessEntry[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of entries) {
    const kind = e.method === "GET" ? `GET ${e.path.replace(/^.*\.git\//, "")}` : `POST ${e.command ?? "?"}`;
    const key = e.status === 200 ? kind : `${kind} ${e.status}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}
