// The demo's real node, the dev cluster's (dev/devcluster/src/node.ts):
// containerd and runc from Debian, kubelet, kube-controller-manager and
// kube-scheduler as local processes, for the one thing that needs pods to
// really run, the Pipe run's pod. It starts in the background as soon as the
// control plane is up, so its seconds overlap the git server's, the registry's
// and the services' starts; only the Pipe run waits for it.

import type { ControlPlane } from "@quarry/devcluster/controlplane";
import { startNode, type TestNode } from "@quarry/devcluster/node";
import type { Narrator } from "./narrator.ts";
import type { Teardown } from "./teardown.ts";

export interface DemoNode {
  /** Resolves once the Node is registered and every process is healthy; rejects with why not. */
  ready: Promise<TestNode>;
  /** Undefined once the node is ready, else the start's latest news (e.g. that it waits for another run's node). */
  pending(): string | undefined;
}

export function startDemoNode(
  cp: ControlPlane,
  n: Narrator,
  teardown: Teardown,
  signal: AbortSignal,
): DemoNode {
  // its own abort, so a teardown after any failure (not only Ctrl-C) stops a start still under
  // way, e.g. one waiting for a first build of kubelet or for another run's node to stop
  const abort = new AbortController();
  const onAbort = () => abort.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  const started = performance.now();
  n.say(
    "starting a real node in the background (containerd + runc, kubelet, kube-controller-manager, kube-scheduler)",
  );
  let news: string | undefined = "starting";
  // one node per machine: time spent waiting for another run's node is no part of this one's start
  let waitingSince: number | undefined;
  let waitedMs = 0;
  const log = (m: string) => {
    news = m;
    if (m.startsWith("waiting for")) waitingSince ??= performance.now();
    else if (waitingSince !== undefined && m.startsWith("starting")) {
      waitedMs = performance.now() - waitingSince;
      waitingSince = undefined;
    }
    n.say(`  [node] ${m}`);
  };
  const starting = startNode(cp, { log, signal: abort.signal });
  const ready = n
    .record(
      "setup",
      "a real node (started in the background)",
      () => starting,
      () => ({
        outcome: "done",
        reason: waitedMs > 0 ? `after ${seconds(waitedMs)} waiting for another run's node` : "",
      }),
    )
    .then((node) => {
      news = undefined;
      const totalMs = performance.now() - started;
      const waited = waitedMs > 0 ? `, after ${seconds(waitedMs)} waiting for another run's node` : "";
      n.say(
        `  node ${node.name} ready: its start took ${seconds(totalMs - waitedMs)}${waited}, in the background (images ${node.toolsImage} and ${node.pauseImage})`,
      );
      return node;
    });
  // the Pipe run awaits it and reports a failure; until then nobody else does
  ready.catch(() => {});
  teardown.add("the node", async () => {
    signal.removeEventListener("abort", onAbort);
    abort.abort(new Error("the demo is stopping"));
    // an aborted start stops what it had started before it rejects
    const node = await ready.catch(() => undefined);
    if (!node) {
      n.sayAlways("node start interrupted: what it had started is stopped, its directory removed");
      return;
    }
    const t = performance.now();
    await node.stop();
    n.sayAlways(
      `node stopped: its pods deleted, processes stopped, mounts and directory removed (${((performance.now() - t) / 1000).toFixed(1)}s)`,
    );
  });
  return { ready, pending: () => news };
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;
