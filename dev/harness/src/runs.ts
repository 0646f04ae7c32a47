// Runs and CustomRuns in e2e scenarios: build them as Tekton Pipelines would,
// create them, wait for their outcome, cancel them as a PipelineRun does.
import type { AnyRun, RunFlavour } from "@quarry/api";
import { getRun, resourceOf, runDone, runSucceeded } from "@quarry/devcluster/runs";
import type { RunningService } from "@quarry/devcluster/service";
import { waitUntil } from "@quarry/devcluster/wait";
import { isApiError, type KubeClient } from "@quarry/kube";
import type { Scenario } from "./scenario.ts";

export {
  cancelRun,
  createRun,
  getRun,
  type RunInput,
  resourceOf,
  runDone,
  runObject,
  runSucceeded,
  WAIT_REF,
} from "@quarry/devcluster/runs";

export const FLAVOURS: readonly RunFlavour[] = ["CustomRun", "Run"];

export function waitForRun(
  scn: Scenario,
  flavour: RunFlavour,
  name: string,
  until: (run: AnyRun) => boolean = runDone,
  timeoutMs = 30_000,
): Promise<AnyRun> {
  return waitUntil(
    `${flavour} ${name}`,
    async () => {
      const run = await getRun(scn.admin, flavour, scn.namespace, name);
      return until(run) ? run : undefined;
    },
    { timeoutMs },
  );
}

/** Writes a run's status as some third-party controller would (through /status). */
export function writeRunStatus(
  client: KubeClient,
  flavour: RunFlavour,
  namespace: string,
  name: string,
  status: Record<string, unknown>,
): Promise<AnyRun> {
  return client.mergePatch<AnyRun>(resourceOf(flavour), namespace, name, { status }, "status");
}

/** `quarry_run_enforcements_total{reason, kind}` on the run-controller's /metrics (0 when absent). */
export async function enforcementCount(
  runController: RunningService,
  reason: string,
  flavour: RunFlavour,
): Promise<number> {
  const { body } = await runController.ops("/metrics");
  const line = body
    .split("\n")
    .find((l) => l.startsWith(`quarry_run_enforcements_total{reason="${reason}",kind="${flavour}"} `));
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : 0;
}

export interface RunEvent {
  type: string;
  reason: string;
  message: string;
  /** The service that recorded it (source.component): "run-controller", "wait-task", ... */
  component: string;
}

/** The core/v1 Events recorded on one run. */
export async function runEvents(
  client: KubeClient,
  flavour: RunFlavour,
  namespace: string,
  name: string,
): Promise<RunEvent[]> {
  const list = await client.request<{
    items: {
      type: string;
      reason: string;
      message?: string;
      source?: { component?: string };
      involvedObject: { kind?: string; name?: string };
    }[];
  }>("GET", `/api/v1/namespaces/${namespace}/events`);
  return list.items
    .filter((e) => e.involvedObject.kind === flavour && e.involvedObject.name === name)
    .map((e) => ({
      type: e.type,
      reason: e.reason,
      message: e.message ?? "",
      component: e.source?.component ?? "",
    }));
}

/** One state of a run's Succeeded condition as a watch saw it. */
export interface RunState {
  /** When the watch delivered it (ms, this machine's clock). */
  at: number;
  status: string;
  reason: string;
  message: string;
  /** status.retriesStatus length */
  retries: number;
}

export interface RunStateRecorder {
  /** Resolves once the watch is in place: every later change is recorded. */
  ready: Promise<void>;
  /** Changes (status, reason, message or retries) per run name, in order; "none" before any condition. */
  states: Map<string, RunState[]>;
  stop(): void;
}

/** Records every change of each run's Succeeded condition (and attempt count) through a watch. */
export function recordRunStates(
  client: KubeClient,
  flavour: RunFlavour,
  namespace: string,
): RunStateRecorder {
  const states = new Map<string, RunState[]>();
  const abort = new AbortController();
  const rt = resourceOf(flavour);
  const note = (run: AnyRun) => {
    const name = run.metadata?.name;
    if (!name) return;
    const c = runSucceeded(run);
    const state: RunState = {
      at: Date.now(),
      status: c?.status ?? "none",
      reason: c?.reason ?? "",
      message: c?.message ?? "",
      retries: run.status?.retriesStatus?.length ?? 0,
    };
    const seq = states.get(name) ?? [];
    const last = seq[seq.length - 1];
    const same =
      last &&
      last.status === state.status &&
      last.reason === state.reason &&
      last.message === state.message &&
      last.retries === state.retries;
    if (!same) seq.push(state);
    states.set(name, seq);
  };
  let markReady: () => void = () => {};
  const ready = new Promise<void>((r) => {
    markReady = r;
  });
  void (async () => {
    let resourceVersion: string | undefined;
    while (!abort.signal.aborted) {
      try {
        if (resourceVersion === undefined) {
          const list = await client.list<AnyRun>(rt, namespace, {}, abort.signal);
          for (const run of list.items) note(run);
          resourceVersion = list.metadata?.resourceVersion;
          markReady();
        }
        for await (const ev of client.watch<AnyRun>(rt, namespace, { resourceVersion }, abort.signal)) {
          if (ev.type === "ERROR") {
            resourceVersion = undefined; // expired: list again
            break;
          }
          resourceVersion = ev.object.metadata?.resourceVersion ?? resourceVersion;
          if (ev.type !== "BOOKMARK") note(ev.object);
        }
      } catch {
        // a fresh CRD's watch cache answers 429 for a moment; the stream may also just end
        if (!abort.signal.aborted) await new Promise((r) => setTimeout(r, 200));
      }
    }
  })();
  return { ready, states, stop: () => abort.abort() };
}

/** Initialised and not done (Succeeded Unknown with a startTime). */
export const runStarted = (run: AnyRun) => runSucceeded(run)?.status === "Unknown" && !!run.status?.startTime;

/** A time as Kubernetes (metav1.Time) writes it: whole seconds. */
export const metaTime = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

export interface RunTransitionRecorder {
  /**
   * Per run name, one entry for each change of its Succeeded condition as a watch saw it:
   * "none", then "status/reason". Stricter than recordTransitions: a rewrite of the same
   * state (a new lastTransitionTime or message) is an entry of its own, so a condition
   * written twice shows as two terminal entries.
   */
  transitions: Map<string, string[]>;
  stop(): void;
}

/** Records the Succeeded condition of every run of one flavour in the namespace, through a watch. */
export function recordRunTransitions(
  client: KubeClient,
  flavour: RunFlavour,
  namespace: string,
): RunTransitionRecorder {
  const transitions = new Map<string, string[]>();
  const last = new Map<string, string>();
  const abort = new AbortController();
  void (async () => {
    let resourceVersion: string | undefined;
    while (!abort.signal.aborted) {
      try {
        for await (const ev of client.watch<AnyRun>(
          resourceOf(flavour),
          namespace,
          { resourceVersion },
          abort.signal,
        )) {
          if (ev.type === "ERROR") {
            // 410 Gone: that resourceVersion is compacted; start over (a fresh watch lists what exists)
            resourceVersion = undefined;
            break;
          }
          resourceVersion = ev.object.metadata?.resourceVersion ?? resourceVersion;
          const name = ev.object.metadata?.name;
          if (!name || ev.type === "BOOKMARK" || ev.type === "DELETED") continue;
          const c = runSucceeded(ev.object);
          const seen = JSON.stringify(c ?? null);
          if (last.get(name) === seen) continue;
          last.set(name, seen);
          const seq = transitions.get(name) ?? [];
          seq.push(c ? `${c.status}/${c.reason ?? ""}` : "none");
          transitions.set(name, seq);
        }
      } catch (err) {
        if (isApiError(err, 410)) resourceVersion = undefined;
        // retried: the apiserver restarting, or a fresh CRD's watch cache answering 429
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  })();
  return { transitions, stop: () => abort.abort() };
}

export interface RunEvents {
  /** Event objects about the run. */
  objects: number;
  /** Their summed `count` (what aggregation by the apiserver or a recorder folds into one object). */
  count: number;
}

/** Events of one type and reason about runs of one flavour, per run name. */
/**
 * runEventCounts once every named run has its Event: the controllers record an Event after the
 * status write it explains, so a test that saw the status may look before the Event exists.
 */
export function runEventCountsFor(
  client: KubeClient,
  namespace: string,
  flavour: RunFlavour,
  reason: string,
  names: readonly string[],
): Promise<Map<string, RunEvents>> {
  return waitUntil(`${reason} Events of ${names.length} ${flavour}s`, async () => {
    const counts = await runEventCounts(client, namespace, flavour, reason);
    return names.every((n) => counts.has(n)) ? counts : undefined;
  });
}

export async function runEventCounts(
  client: KubeClient,
  namespace: string,
  flavour: RunFlavour,
  reason: string,
  type = "Warning",
): Promise<Map<string, RunEvents>> {
  const list = await client.request<{
    items: { type: string; reason: string; count?: number; involvedObject: { kind: string; name: string } }[];
  }>("GET", `/api/v1/namespaces/${namespace}/events`);
  const out = new Map<string, RunEvents>();
  for (const e of list.items) {
    if (e.type !== type || e.reason !== reason || e.involvedObject.kind !== flavour) continue;
    const seen = out.get(e.involvedObject.name) ?? { objects: 0, count: 0 };
    out.set(e.involvedObject.name, { objects: seen.objects + 1, count: seen.count + (e.count ?? 1) });
  }
  return out;
}
