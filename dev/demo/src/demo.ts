// The demo (scripts/demo.sh): Quarry resolving from git, an OCI bundle, a web server, a hub
// (a protocol fixture of one) and the cluster, its
// lifecycle deciding what no resolver answers, custom-task runs, and a Pipe run
// making a certificate into Secrets on a real node, on a throwaway cluster in
// under a minute; then `get`, `describe` and `resolve` as a person would run
// them. Whatever was started is stopped on success, failure or Ctrl-C;
// `--keep` leaves it running until Ctrl-C so a person can look around.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runDescribe } from "@quarry/cli/describe";
import { runDescribeRun } from "@quarry/cli/describe-run";
import { runGet } from "@quarry/cli/get";
import { runGetRuns } from "@quarry/cli/get-runs";
import { runResolve } from "@quarry/cli/resolve";
import { ociTools } from "@quarry/devcluster/registry";
import { BUNDLE_REPO, BUNDLE_TASK } from "./bundles.ts";
import { DEMO_TIMEOUT, type DemoCluster, GREET_TASK, startDemoCluster } from "./cluster.ts";
import { HELLO_PATH } from "./git.ts";
import { HUB_TASK } from "./hub.ts";
import { Narrator } from "./narrator.ts";
import { CERT_PIPE } from "./pipe-objects.ts";
import { PIPE_LIFECYCLE_TIMEOUT, PIPE_RUN, runPipeStory } from "./pipes.ts";
import { runRunStories } from "./runs.ts";
import { runStories } from "./stories.ts";
import { formatSummary } from "./summary.ts";
import { Teardown } from "./teardown.ts";
import { Tracker } from "./tracker.ts";
import { LINT_PATH } from "./web.ts";

export interface DemoOptions {
  keep: boolean;
  out?: (s: string) => void;
}

/** Resolves to the process exit code. */
export async function runDemo(opts: DemoOptions): Promise<number> {
  const out = opts.out ?? ((s: string) => process.stdout.write(s));
  const interrupt = new AbortController();
  const n = new Narrator({ mutedBy: interrupt.signal });
  const teardown = new Teardown();
  const onSignal = (sig: NodeJS.Signals) => {
    // a second Ctrl-C means "stop waiting for the teardown"
    if (interrupt.signal.aborted) process.exit(130);
    n.sayAlways(`${sig}: stopping`);
    interrupt.abort(new Error(`interrupted by ${sig}`));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  let code = 0;
  const state = { keeping: false };
  const demo = walkThrough(n, teardown, interrupt.signal, out, opts.keep ? state : undefined);
  try {
    // not every API call takes a signal (and a stopping apiserver can hold one for long),
    // so an interruption stops waiting on the demo and goes straight to the teardown
    await Promise.race([demo, rejectOnAbort(interrupt.signal)]);
  } catch (err) {
    // Ctrl-C in a terminal signals the whole process group: a child may die, and fail a step,
    // before our own handler has run. Give the handler a moment before calling this a failure.
    if (!interrupt.signal.aborted) await new Promise((r) => setTimeout(r, 200));
    if (interrupt.signal.aborted) {
      // Ctrl-C is how a kept cluster is meant to end; anywhere else it cuts the demo short
      code = state.keeping ? 0 : 130;
    } else {
      code = 1;
      n.sayAlways(`demo failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    }
  } finally {
    demo.catch(() => {}); // overtaken by the interruption; its failures no longer matter
    const start = Date.now();
    n.sayAlways("tearing down");
    await n
      .record(
        "teardown",
        "everything the demo started, stopped",
        () =>
          n.waitFor(
            "the teardown",
            teardown.run((m) => n.sayAlways(m)),
          ),
        () => ({ outcome: "done", reason: "" }),
      )
      .catch(() => {}); // Teardown.run reports each failure itself and never rejects
    n.sayAlways(`  torn down (${((Date.now() - start) / 1000).toFixed(1)}s); demo took ${n.elapsed()}`);
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    // the last thing the demo prints: every step at a glance, a failed one included
    out(`\n${formatSummary(n.rows)}`);
  }
  return code;
}

async function walkThrough(
  n: Narrator,
  teardown: Teardown,
  signal: AbortSignal,
  out: (s: string) => void,
  keep: { keeping: boolean } | undefined,
): Promise<void> {
  n.say(
    "Quarry demo: a throwaway cluster with a real node, a local git server, OCI registry, web server and hub protocol fixture, Quarry's lifecycle controller, six resolvers, the run-controller and the Wait custom task; eleven requests and five runs",
  );
  const cluster = await startDemoCluster(n, teardown, signal);
  const tracker = new Tracker(cluster.admin, n, signal);
  const results = await runStories(cluster, n, tracker);
  n.say(`all eleven outcomes seen after ${n.elapsed()}`);
  signal.throwIfAborted();
  const runs = await runRunStories(cluster, n);
  n.say(`all four runs ended as expected after ${n.elapsed()}`);
  signal.throwIfAborted();
  const pipe = await runPipeStory(cluster, n, signal);
  n.say(`the Pipe run made its Secrets after ${n.elapsed()}`);
  signal.throwIfAborted();

  out("\n$ quarry get -A\n");
  await runGet(cluster.admin, { namespace: undefined }, out, out);
  for (const rr of [
    results.fromGit,
    results.gitNotFound,
    results.fromBundle,
    results.fromHub,
    results.timedOut,
  ]) {
    const { name, namespace } = rr.metadata;
    signal.throwIfAborted();
    out(`\n$ quarry describe ${name} -n ${namespace}\n`);
    await runDescribe(cluster.admin, namespace!, name!, out);
  }
  signal.throwIfAborted();
  out("\n$ quarry get runs -A\n");
  await runGetRuns(cluster.admin, { namespace: undefined, flavours: ["CustomRun", "Run"] }, out, out);
  for (const run of [runs.cancelled, runs.fromGit, runs.nobody, pipe.run]) {
    signal.throwIfAborted();
    out(`\n$ quarry describe run ${run.metadata.name} -n ${run.metadata.namespace}\n`);
    await runDescribeRun(cluster.admin, run.metadata.namespace!, run.metadata.name!, "CustomRun", out);
  }
  signal.throwIfAborted();
  // as the command itself would: the YAML on stdout, progress and refSource on stderr
  out(`\n$ quarry resolve cluster kind=task name=${GREET_TASK} -n ${cluster.namespace}\n`);
  const resolved = await runResolve(
    cluster.admin,
    {
      resolverType: "cluster",
      params: [
        { name: "kind", value: "task" },
        { name: "name", value: GREET_TASK },
      ],
      namespace: cluster.namespace,
      timeoutMs: 15_000,
    },
    out,
    (s) => process.stderr.write(s),
  );
  if (resolved !== 0) throw new Error(`quarry resolve exited ${resolved}`);
  if (keep) {
    keep.keeping = true;
    await keepRunning(cluster, signal);
  }
}

function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

/** The repository's root (this file is dev/demo/src/demo.ts). */
const QUARRY_ROOT_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

async function keepRunning(c: DemoCluster, signal: AbortSignal): Promise<never> {
  const node = await c.node.ready;
  // the launcher, not `node cli/src/main.ts`: it finds a Node >= 22 even where the shell's is older
  const cli = join(QUARRY_ROOT_DIR, "bin", "quarry");
  const ns = c.namespace;
  const logs = Object.entries(c.services).map(
    ([name, s]) => `  ${name.padEnd(21)} pid ${String(s.svc.pid).padEnd(7)} log ${s.svc.logFile}`,
  );
  process.stderr.write(
    [
      "",
      "The cluster keeps running (--keep). In another shell (or `quarry` once scripts/install-cli.sh ran):",
      "",
      `  export KUBECONFIG=${c.cp.adminKubeconfig}`,
      `  ${cli} get -A`,
      `  ${cli} describe git-hello -n ${ns}`,
      `  ${cli} resolve git url=${c.repo.url} revision=main pathInRepo=${HELLO_PATH} -n ${ns}`,
      `  ${cli} resolve bundles bundle=${c.bundle.ref} name=${BUNDLE_TASK} -n ${ns}`,
      `  ${cli} resolve http url=${c.web.url} digest=${c.web.digest} -n ${ns}`,
      `  ${cli} resolve hub name=${HUB_TASK} 'version=~> 0.2' -n ${ns}`,
      `  ${cli} resolve cluster kind=task name=${GREET_TASK} -n ${ns}`,
      `  ${cli} describe run ${PIPE_RUN} -n ${ns}`,
      `  ${cli} resolve pipe pipe=${CERT_PIPE} cn=other.demo.quarry.test -n ${ns}   # two more Secrets`,
      "",
      `The git server serves ${c.repo.bare}: clone it, commit, push back, and main resolves anew.`,
      `The registry takes pushes without auth: ${ociTools().tkn} bundle push ${c.bundle.registry.ref(`${BUNDLE_REPO}:v2`)} -f task.yaml`,
      `git-resolver-config allows only ${c.repo.server.baseUrl}, bundleresolver-config only ${c.bundle.registry.host}/${BUNDLE_REPO}.`,
      `The web server serves ${LINT_PATH} at ${c.web.server.base}; the hub protocol fixture (not a hub) answers Artifact Hub's API at ${c.hub.base}.`,
      `The services watch all namespaces; their ConfigMaps are in ${ns}, the lifecycle timeout is ${PIPE_LIFECYCLE_TIMEOUT} (${DEMO_TIMEOUT} until the Pipe run).`,
      ...logs,
      `Control-plane logs: ${c.cp.dir}/{etcd,kube-apiserver}.log`,
      `Node logs: ${node.dir}/{containerd,kubelet,kube-controller-manager,kube-scheduler}.log`,
      "",
      "Press Ctrl-C to stop it and clean up.",
      "",
    ].join("\n"),
  );
  // the interruption ends the demo (runDemo races it); this only keeps the walk-through pending
  return new Promise<never>((_, reject) =>
    signal.addEventListener("abort", () => reject(signal.reason), { once: true }),
  );
}
