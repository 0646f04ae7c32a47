// Every status write to each Run and CustomRun as a watch delivers it, kept
// per run: the Succeeded states it went through, every distinct terminal
// condition, completionTime and results it showed, how many status writes came
// after its first terminal state, and the largest status. A run that finished
// twice shows two terminal states, a rewritten terminal condition, or a second
// completionTime or results. Like ledger.ts, the watch resumes from the last
// resourceVersion after any error and relists after a 410.
import type { AnyRun, RunFlavour } from "@quarry/api";
import { FLAVOURS, resourceOf, runSucceeded } from "@quarry/harness/runs";
import { isApiError, type KubeClient } from "@quarry/kube";
import { isTerminal } from "./ledger.ts";

export interface RunHistory {
  uid: string;
  /** Distinct consecutive Succeeded states: "none", "Unknown/<reason>", "True/<reason>", "False/<reason>". */
  states: string[];
  /** Distinct terminal Succeeded conditions (status, reason, message, lastTransitionTime) seen. */
  terminalConditions: string[];
  /** Distinct non-empty completionTimes seen. */
  completionTimes: string[];
  /** Distinct results seen once terminal. */
  terminalResults: string[];
  /** Status changes seen after the first terminal state. */
  writesAfterTerminal: number;
  /** The status fields (status.annotations keys as `annotations.<key>`) those writes changed. */
  changedAfterTerminal: string[];
  /** The largest serialised status seen, in bytes. */
  maxStatusBytes: number;
  /** Where a status embedded a child's status or data (TEP-0100: by reference only), if ever. */
  embedded?: string;
  lastStatus: string;
}

export interface RunLedger {
  /** Keyed `<flavour>/<name>`. */
  histories: Map<string, RunHistory>;
  restarts: number;
  stop(): void;
}

export const runKey = (flavour: RunFlavour, name: string) => `${flavour}/${name}`;

/** A trace of a child's status or data inside a run's status (only references belong there). */
export function embeddedChild(status: AnyRun["status"]): string | undefined {
  for (const [i, ref] of (status?.childReferences ?? []).entries()) {
    const extra = Object.keys(ref).filter(
      (k) => !["apiVersion", "kind", "name", "pipelineTaskName"].includes(k),
    );
    if (extra.length) return `childReferences[${i}] has ${extra.join(", ")}`;
  }
  const json = JSON.stringify(status ?? {});
  for (const key of ['"data"', '"taskRunStatus"', '"runStatus"', '"resolutionRequest"'])
    if (json.includes(key)) return `status holds ${key}`;
  return undefined;
}

/** Top-level status fields that differ, status.annotations per key. */
export function changedFields(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const out: string[] = [];
  const differ = (a: unknown, b: unknown) => JSON.stringify(a) !== JSON.stringify(b);
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (k === "annotations") {
      const a = (before[k] ?? {}) as Record<string, unknown>;
      const b = (after[k] ?? {}) as Record<string, unknown>;
      for (const key of new Set([...Object.keys(a), ...Object.keys(b)]))
        if (differ(a[key], b[key])) out.push(`annotations.${key}`);
    } else if (differ(before[k], after[k])) out.push(k);
  }
  return out;
}

function record(histories: Map<string, RunHistory>, run: AnyRun): void {
  const name = run.metadata?.name;
  if (!name) return;
  const key = runKey(run.kind, name);
  const uid = run.metadata.uid ?? "";
  let h = histories.get(key);
  if (!h || h.uid !== uid) {
    h = {
      uid,
      states: [],
      terminalConditions: [],
      completionTimes: [],
      terminalResults: [],
      writesAfterTerminal: 0,
      changedAfterTerminal: [],
      maxStatusBytes: 0,
      lastStatus: "",
    };
    histories.set(key, h);
  }
  const status = JSON.stringify(run.status ?? {});
  if (status === h.lastStatus) return;
  if (h.states.some(isTerminal)) {
    h.writesAfterTerminal++;
    for (const f of changedFields(
      JSON.parse(h.lastStatus || "{}"),
      (run.status ?? {}) as Record<string, unknown>,
    ))
      if (!h.changedAfterTerminal.includes(f)) h.changedAfterTerminal.push(f);
  }
  h.lastStatus = status;
  h.maxStatusBytes = Math.max(h.maxStatusBytes, status.length);
  h.embedded ??= embeddedChild(run.status);
  const c = runSucceeded(run);
  const state = c ? `${c.status}/${c.reason ?? ""}` : "none";
  if (h.states[h.states.length - 1] !== state) h.states.push(state);
  const addDistinct = (list: string[], v: string) => {
    if (v && !list.includes(v)) list.push(v);
  };
  addDistinct(h.completionTimes, run.status?.completionTime ?? "");
  if (isTerminal(state)) {
    addDistinct(
      h.terminalConditions,
      JSON.stringify([c?.status, c?.reason, c?.message, c?.lastTransitionTime]),
    );
    addDistinct(h.terminalResults, JSON.stringify(run.status?.results ?? []));
  }
}

function watchFlavour(
  client: KubeClient,
  namespace: string,
  flavour: RunFlavour,
  ledger: RunLedger,
  signal: AbortSignal,
): void {
  void (async () => {
    let resourceVersion: string | undefined;
    while (!signal.aborted) {
      try {
        if (resourceVersion === undefined) {
          const list = await client.list<AnyRun>(resourceOf(flavour), namespace);
          for (const run of list.items) record(ledger.histories, { ...run, kind: flavour } as AnyRun);
          resourceVersion = list.metadata.resourceVersion;
        }
        for await (const ev of client.watch<AnyRun>(
          resourceOf(flavour),
          namespace,
          { resourceVersion, allowWatchBookmarks: true },
          signal,
        )) {
          if (ev.type === "ERROR") {
            resourceVersion = undefined;
            break;
          }
          resourceVersion = ev.object.metadata?.resourceVersion ?? resourceVersion;
          if (ev.type === "ADDED" || ev.type === "MODIFIED") record(ledger.histories, ev.object);
        }
      } catch (err) {
        if (signal.aborted) break;
        if (isApiError(err) && err.isGone) resourceVersion = undefined;
        await new Promise((r) => setTimeout(r, 300));
      }
      ledger.restarts++;
    }
  })();
}

/** Watches both run flavours in the namespace. */
export function startRunLedger(client: KubeClient, namespace: string): RunLedger {
  const abort = new AbortController();
  const ledger: RunLedger = { histories: new Map(), restarts: 0, stop: () => abort.abort() };
  for (const flavour of FLAVOURS) watchFlavour(client, namespace, flavour, ledger, abort.signal);
  return ledger;
}

/**
 * What may still change once a run is done: the run-controller records its request and the
 * request's refSource whenever it gets to them (README: also for a done run), which a controller
 * that finished the run first (wait-task reads the request itself) does not wait for.
 */
export const AFTER_TERMINAL_ALLOWED = [
  "childReferences",
  "provenance",
  "annotations.quarry.dev/resolution-request",
  "annotations.quarry.dev/ref-source",
];

/** What a run's history shows that must not happen: finished twice, rewritten once done, too big. */
export function runHistoryProblems(h: RunHistory, statusLimitBytes: number): string[] {
  const out: string[] = [];
  const terminal = h.states.filter(isTerminal);
  if (terminal.length > 1) out.push(`${terminal.length} terminal states ${h.states.join(" > ")}`);
  if (h.terminalConditions.length > 1)
    out.push(`terminal condition rewritten: ${h.terminalConditions.join(" then ")}`);
  if (h.completionTimes.length > 1) out.push(`completionTime rewritten: ${h.completionTimes.join(" then ")}`);
  if (h.terminalResults.length > 1)
    out.push(`results rewritten once done: ${h.terminalResults.join(" then ")}`);
  const changed = h.changedAfterTerminal.filter((f) => !AFTER_TERMINAL_ALLOWED.includes(f));
  if (changed.length) out.push(`changed once done: ${changed.join(", ")}`);
  if (h.maxStatusBytes > statusLimitBytes) out.push(`status of ${h.maxStatusBytes} bytes`);
  if (h.embedded) out.push(h.embedded);
  return out;
}
