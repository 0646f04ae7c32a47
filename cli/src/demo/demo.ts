// `quarry demo`: Quarry's lifecycle on a throwaway cluster in about ten
// seconds, then `get` and `describe` as a person would run them. Whatever was
// started is stopped on success, failure or Ctrl-C; `--keep` leaves it
// running until Ctrl-C so a person can look around.
import { runDescribe } from "../describe.ts";
import { runGet } from "../get.ts";
import { DEMO_TIMEOUT, type DemoCluster, startDemoCluster } from "./cluster.ts";
import { Narrator } from "./narrator.ts";
import { runStories } from "./stories.ts";
import { Teardown } from "./teardown.ts";
import { Tracker } from "./tracker.ts";

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
    await teardown.run((m) => n.sayAlways(m));
    n.sayAlways(`  torn down (${((Date.now() - start) / 1000).toFixed(1)}s); demo took ${n.elapsed()}`);
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
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
  n.say("quarry demo: a throwaway control plane, Quarry's lifecycle controller, four ResolutionRequests");
  const cluster = await startDemoCluster(n, teardown, signal);
  const tracker = new Tracker(cluster.admin, n, signal);
  const results = await runStories(cluster, n, tracker);
  n.say(`all four outcomes seen after ${n.elapsed()}`);
  signal.throwIfAborted();

  out("\n$ quarry get -A\n");
  await runGet(cluster.admin, { namespace: undefined }, out, out);
  for (const rr of [results.succeeded, results.timedOut, results.failed]) {
    const { name, namespace } = rr.metadata;
    signal.throwIfAborted();
    out(`\n$ quarry describe ${name} -n ${namespace}\n`);
    await runDescribe(cluster.admin, namespace!, name!, out);
  }
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

function keepRunning(c: DemoCluster, signal: AbortSignal): Promise<never> {
  const cli = "node cli/src/main.ts";
  process.stderr.write(
    [
      "",
      "The cluster keeps running (--keep). In another shell, from the repository root:",
      "",
      `  export KUBECONFIG=${c.cp.adminKubeconfig}`,
      `  ${cli} get -A`,
      `  ${cli} describe nonesuch-task -n ${c.namespace}`,
      "",
      `The lifecycle controller (pid ${c.controller.pid}) watches all namespaces; its timeout is ${DEMO_TIMEOUT},`,
      `its ConfigMap is ${c.namespace}/lifecycle-controller-config, its log ${c.controller.logFile}.`,
      `Control-plane logs: ${c.cp.dir}/{etcd,kube-apiserver}.log`,
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
