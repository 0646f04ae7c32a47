// Every write to each request as a watch delivers it, kept per request: the
// Succeeded states it went through, how many times its data was written (set,
// or changed once set), and how many status writes came after its first
// terminal state. A request resolved twice shows two terminal states or two
// data writes. The watch resumes from the last resourceVersion after any error
// (an apiserver restart, a frozen etcd) and relists after a 410, so no write is
// missed in between (a relist only adds a state when it differs).
import { createHash } from "node:crypto";
import type { ResolutionRequest } from "@quarry/api";
import { resolutionRequests } from "@quarry/api";
import { isApiError, type KubeClient } from "@quarry/kube";

export interface RequestHistory {
  uid: string;
  /** Distinct consecutive Succeeded states: "none", "Unknown/<reason>", "True/", "False/<quarry.dev/reason>". */
  states: string[];
  /** Times status.data was set or changed. */
  dataWrites: number;
  /** Status changes seen after the first terminal state. */
  writesAfterTerminal: number;
  lastData: string;
  lastStatus: string;
}

export interface Ledger {
  histories: Map<string, RequestHistory>;
  /** Watch restarts the ledger needed (apiserver restart, etcd frozen). */
  restarts: number;
  stop(): void;
}

export const isTerminal = (state: string) => state.startsWith("True") || state.startsWith("False");

function stateOf(rr: ResolutionRequest): string {
  const c = rr.status?.conditions?.find((x) => x.type === "Succeeded");
  if (!c) return "none";
  if (c.status === "False") return `False/${rr.status?.annotations?.["quarry.dev/reason"] ?? ""}`;
  return `${c.status}/${c.status === "True" ? "" : (c.reason ?? "")}`;
}

function record(histories: Map<string, RequestHistory>, rr: ResolutionRequest): void {
  const name = rr.metadata.name;
  if (!name) return;
  const uid = rr.metadata.uid ?? "";
  let h = histories.get(name);
  if (!h || h.uid !== uid) {
    h = { uid, states: [], dataWrites: 0, writesAfterTerminal: 0, lastData: "", lastStatus: "" };
    histories.set(name, h);
  }
  const status = JSON.stringify(rr.status ?? {});
  if (status === h.lastStatus) return;
  if (h.states.some(isTerminal)) h.writesAfterTerminal++;
  h.lastStatus = status;
  const data = rr.status?.data ? createHash("sha256").update(rr.status.data).digest("hex") : "";
  if (data && data !== h.lastData) h.dataWrites++;
  h.lastData = data;
  const state = stateOf(rr);
  if (h.states[h.states.length - 1] !== state) h.states.push(state);
}

export function startLedger(client: KubeClient, namespace: string): Ledger {
  const histories = new Map<string, RequestHistory>();
  const abort = new AbortController();
  const ledger: Ledger = { histories, restarts: 0, stop: () => abort.abort() };
  void (async () => {
    let resourceVersion: string | undefined;
    while (!abort.signal.aborted) {
      try {
        if (resourceVersion === undefined) {
          const list = await client.list<ResolutionRequest>(resolutionRequests, namespace);
          for (const rr of list.items) record(histories, rr);
          resourceVersion = list.metadata.resourceVersion;
        }
        for await (const ev of client.watch<ResolutionRequest>(
          resolutionRequests,
          namespace,
          { resourceVersion, allowWatchBookmarks: true },
          abort.signal,
        )) {
          if (ev.type === "ERROR") {
            // 410: the resourceVersion is gone; relist
            resourceVersion = undefined;
            break;
          }
          resourceVersion = ev.object.metadata?.resourceVersion ?? resourceVersion;
          if (ev.type === "ADDED" || ev.type === "MODIFIED") record(histories, ev.object);
        }
      } catch (err) {
        if (abort.signal.aborted) break;
        if (isApiError(err) && err.isGone) resourceVersion = undefined;
        await new Promise((r) => setTimeout(r, 300));
      }
      ledger.restarts++;
    }
  })();
  return ledger;
}
