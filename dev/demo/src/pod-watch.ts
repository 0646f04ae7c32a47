// Narrates the pipe pods of one namespace through a watch, as `kubectl get
// pods -w` would: the pipe resolver creates a pod on the node, its init
// container runs openssl, the waiting container starts, the resolver copies
// the files out and deletes the pod. Only phases and container states are
// printed, never a termination message (an init container may write what it
// made there).
import { LABEL_MANAGED_BY, MANAGED_BY_QUARRY } from "@quarry/api";
import { type ContainerStatus, type Pod, pods } from "@quarry/devcluster/pods";
import type { KubeClient, KubeObject } from "@quarry/kube";

/** `Pending, openssl: running, quarry-wait: waiting (PodInitializing)`. */
export function podStateText(pod: Pod): string {
  const status = pod.status ?? {};
  const containers = [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])];
  // a deleted pod's phase says how its containers were stopped (the waiting `sleep` is killed, so
  // "Failed"), which is no failure of the pipe: say it is being deleted instead
  const phase = pod.metadata.deletionTimestamp ? "Terminating" : (status.phase ?? "Pending");
  return [phase, ...containers.map((c) => `${c.name}: ${containerState(c)}`)].join(", ");
}

function containerState(c: ContainerStatus): string {
  const { running, terminated, waiting } = c.state ?? {};
  if (terminated) return `exited ${terminated.exitCode}${terminated.reason ? ` (${terminated.reason})` : ""}`;
  if (running) return "running";
  if (waiting) return `waiting${waiting.reason ? ` (${waiting.reason})` : ""}`;
  return "unknown";
}

export interface PodWatch {
  /** Resolves true once every pod the watch saw is deleted, false if one is still there after `timeoutMs`. */
  allGone(timeoutMs: number): Promise<boolean>;
  /** Ends the watch; what it saw was already narrated. */
  stop(): void;
}

/** Watches Quarry-managed pods in `namespace` from now on, saying each change of state once. */
export function watchPipePods(
  client: KubeClient,
  namespace: string,
  say: (message: string) => void,
  signal: AbortSignal,
): PodWatch {
  const done = new AbortController();
  const both = AbortSignal.any([signal, done.signal]);
  const last = new Map<string, string>();
  const note = (type: string, pod: Pod) => {
    const name = pod.metadata.name ?? "?";
    const state = type === "DELETED" ? "deleted" : podStateText(pod);
    const seen = last.get(name);
    if (seen === state) return;
    last.set(name, state);
    const text = seen === undefined ? `created on node ${pod.spec.nodeName ?? "<none>"}: ${state}` : state;
    say(`${`${namespace}/${name}`.padEnd(30)} pod ${text}`);
  };
  void (async () => {
    let resourceVersion: string | undefined;
    while (!both.aborted) {
      try {
        const events = client.watch<Pod & KubeObject>(
          pods,
          namespace,
          {
            labelSelector: `${LABEL_MANAGED_BY}=${MANAGED_BY_QUARRY}`,
            resourceVersion,
            timeoutSeconds: 60,
          },
          both,
        );
        for await (const ev of events) {
          if (ev.type === "ERROR") {
            resourceVersion = undefined; // expired: a fresh watch replays what exists
            break;
          }
          resourceVersion = ev.object.metadata.resourceVersion ?? resourceVersion;
          if (ev.type !== "BOOKMARK") note(ev.type, ev.object);
        }
      } catch {
        // the watch broke (or was stopped): start another from the last version seen
        if (!both.aborted) await new Promise((r) => setTimeout(r, 200));
      }
    }
  })();
  const allGone = async (timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    const gone = () => [...last.values()].every((state) => state === "deleted");
    while (!gone() && Date.now() < deadline && !both.aborted) await new Promise((r) => setTimeout(r, 100));
    return gone();
  };
  return { allGone, stop: () => done.abort() };
}
