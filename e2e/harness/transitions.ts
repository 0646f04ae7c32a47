// Records every change of each request's Succeeded condition as seen by a
// watch, to prove transitions happen exactly once (no flip-flop, no repeat).
import type { ResolutionRequest } from "@quarry/api";
import { resolutionRequests } from "@quarry/api";
import type { KubeClient } from "@quarry/kube";

export interface TransitionRecorder {
  transitions: Map<string, string[]>;
  stop(): void;
}

export function recordTransitions(client: KubeClient, namespace: string): TransitionRecorder {
  const transitions = new Map<string, string[]>();
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
          if (seq[seq.length - 1] !== state) seq.push(state);
          transitions.set(name, seq);
        }
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  })();
  return { transitions, stop: () => abort.abort() };
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
