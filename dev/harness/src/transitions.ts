// Records every change of each request's Succeeded condition as seen by a
// watch, to prove transitions happen exactly once (no flip-flop, no repeat),
// and when the watch delivered each (what a test compares latencies with).
import type { ResolutionRequest } from "@quarry/api";
import { resolutionRequests } from "@quarry/api";
import type { KubeClient } from "@quarry/kube";

export interface TransitionRecorder {
  transitions: Map<string, string[]>;
  /** performance.now() when each entry of `transitions` was seen, by request name. */
  seenAt: Map<string, number[]>;
  stop(): void;
}

export function recordTransitions(client: KubeClient, namespace: string): TransitionRecorder {
  const transitions = new Map<string, string[]>();
  const seenAt = new Map<string, number[]>();
  const abort = new AbortController();
  void (async () => {
    let resourceVersion: string | undefined;
    // retried: a fresh CRD's watch cache answers 429 for a moment after install
    while (!abort.signal.aborted) {
      try {
        for await (const ev of client.watch<ResolutionRequest>(
          resolutionRequests,
          namespace,
          { resourceVersion },
          abort.signal,
        )) {
          resourceVersion = ev.object.metadata?.resourceVersion ?? resourceVersion;
          const name = ev.object.metadata?.name;
          if (!name || ev.type === "BOOKMARK" || ev.type === "ERROR") continue;
          const c = ev.object.status?.conditions?.find((x) => x.type === "Succeeded");
          const state = c ? `${c.status}/${c.reason ?? ""}` : "none";
          const seq = transitions.get(name) ?? [];
          const at = seenAt.get(name) ?? [];
          if (seq[seq.length - 1] !== state) {
            seq.push(state);
            at.push(performance.now());
          }
          transitions.set(name, seq);
          seenAt.set(name, at);
        }
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  })();
  return { transitions, seenAt, stop: () => abort.abort() };
}

/** When the watch first showed `name` in a state starting with `prefix` (e.g. "True"), if it did. */
export function firstSeen(rec: TransitionRecorder, name: string, prefix: string): number | undefined {
  const i = (rec.transitions.get(name) ?? []).findIndex((s) => s.startsWith(prefix));
  return i < 0 ? undefined : rec.seenAt.get(name)?.[i];
}

/** Terminal states in a sequence (True/... or False/...). */
export function terminalStates(seq: string[]): string[] {
  return seq.filter((s) => s.startsWith("True") || s.startsWith("False"));
}

export async function countEvents(
  client: KubeClient,
  namespace: string,
  reason: string,
): Promise<Map<string, number>> {
  const list = await client.request<{
    items: { reason: string; count?: number; involvedObject: { name: string } }[];
  }>("GET", `/api/v1/namespaces/${namespace}/events`);
  const out = new Map<string, number>();
  for (const e of list.items) {
    if (e.reason !== reason) continue;
    out.set(e.involvedObject.name, (out.get(e.involvedObject.name) ?? 0) + (e.count ?? 1));
  }
  return out;
}
