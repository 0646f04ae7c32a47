// Where a pipe request's time goes, from three clocks on one machine: the request watch (created →
// data seen → True seen), the pod watch (pod seen, ready to copy: init container done and the waiting
// container running) and the init container's own /proc/uptime readings around its workload, placed on
// the bench's clock (containers share the host's uptime). The split adds up to the latency.
import { readFileSync } from "node:fs";
import { initStamps, type PodTimeline } from "@quarry/harness/pod-timeline";
import { diff, spanOf } from "./phase.ts";
import type { Sample } from "./requests.ts";
import type { Summary } from "./stats.ts";

/** One measured pipe: its request's timeline, its pod's (if seen), its init container's run (performance.now() ms). */
export interface PipeSample {
  request: Sample;
  pod: PodTimeline | undefined;
  init: { start: number; end: number } | undefined;
}

const latency = (p: PipeSample) => diff(p.request.t0, p.request.done);
const initRan = (p: PipeSample) => diff(p.init?.start, p.init?.end);

/** The spans reported, by their JSON key; docs/performance.md ("Pipe resolver") says what each stands for. */
const PIPE_SPANS: Readonly<Record<string, (p: PipeSample) => number | undefined>> = {
  latencyMs: latency,
  initRanMs: initRan,
  // the kubelet's whole-second stamps of the same run, a cross-check of the container's readings
  initRanStampsMs: (p) => {
    const s = p.pod && initStamps(p.pod.last);
    return s && s.finishedAt - s.startedAt;
  },
  resolverShareMs: (p) => diff(initRan(p), latency(p)),
  // the split: resolver (pick-up, checks, pod create), node (sandbox, init start), node (container
  // start, status), resolver (exec tar, outputs, receipt, pod delete, status), lifecycle controller
  createToPodSeenMs: (p) => diff(p.request.t0, p.pod?.added),
  podSeenToInitStartMs: (p) => diff(p.pod?.added, p.init?.start),
  initEndToReadySeenMs: (p) => diff(p.init?.end, p.pod?.ready),
  readySeenToDataSeenMs: (p) => diff(p.pod?.ready, p.request.dataSeen),
  dataSeenToTrueMs: (p) => diff(p.request.dataSeen, p.request.done),
};

export const pipeSpans = (samples: readonly PipeSample[]): Record<string, Summary> =>
  Object.fromEntries(Object.entries(PIPE_SPANS).map(([k, span]) => [k, spanOf(samples, span)]));

/** performance.now() ms of a /proc/uptime reading (seconds), from one reading of both taken now. */
export function uptimeClock(): (uptimeSeconds: number) => number {
  const now = performance.now();
  const uptime = Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]);
  return (u) => now + (u - uptime) * 1000;
}

/** The init container's file, "<start> <end>" (/proc/uptime's seconds), on the bench's clock. */
export function initRun(file: string, clock: (uptimeSeconds: number) => number): PipeSample["init"] {
  const m = /^(\d+(?:\.\d+)?) (\d+(?:\.\d+)?)$/.exec(file.trim());
  const [start, end] = [clock(Number(m?.[1])), clock(Number(m?.[2]))];
  return !m || end < start ? undefined : { start, end };
}
