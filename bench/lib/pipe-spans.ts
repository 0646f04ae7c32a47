// Where a pipe request's time goes, from three clocks on one machine: the
// request watch (created → data seen → True seen), the pod watch (pod seen,
// ready to copy: init container done and the waiting container running) and
// the init container's own readings of /proc/uptime around its workload,
// placed on the bench's clock (the host's uptime, 10 ms steps; containers
// share it). The resolver's share is the latency minus the init container's
// own run; the split below adds up to the latency.
import { readFileSync } from "node:fs";
import type { PodTimeline } from "@quarry/harness/pod-timeline";
import { initStamps } from "@quarry/harness/pod-timeline";
import type { Sample } from "./requests.ts";
import { roundSummary, type Summary, summarize } from "./stats.ts";

/** One measured pipe: its request's timeline, its pod's (if seen), its init container's run (performance.now() ms). */
export interface PipeSample {
  request: Sample;
  pod: PodTimeline | undefined;
  init: { start: number; end: number } | undefined;
}

type Span = (p: PipeSample) => number | undefined;

const diff = (a: number | undefined, b: number | undefined) =>
  a !== undefined && b !== undefined ? b - a : undefined;

/** The spans reported, in order; each is documented in docs/performance.md ("Pipe resolver"). */
const PIPE_SPANS: Readonly<Record<string, Span>> = {
  latencyMs: (p) => diff(p.request.t0, p.request.done),
  initRanMs: (p) => diff(p.init?.start, p.init?.end),
  // the kubelet's whole-second stamps of the same run, a cross-check of the container's readings
  initRanStampsMs: (p) => {
    const s = p.pod && initStamps(p.pod.last);
    return s && s.finishedAt - s.startedAt;
  },
  resolverShareMs: (p) => {
    const latency = diff(p.request.t0, p.request.done);
    const ran = diff(p.init?.start, p.init?.end);
    return latency !== undefined && ran !== undefined ? latency - ran : undefined;
  },
  createToPodSeenMs: (p) => diff(p.request.t0, p.pod?.added),
  podSeenToInitStartMs: (p) => diff(p.pod?.added, p.init?.start),
  initEndToReadySeenMs: (p) => diff(p.init?.end, p.pod?.ready),
  readySeenToDataSeenMs: (p) => diff(p.pod?.ready, p.request.dataSeen),
  dataSeenToTrueMs: (p) => diff(p.request.dataSeen, p.request.done),
};

export function pipeSpans(samples: readonly PipeSample[]): Record<string, Summary> {
  return Object.fromEntries(
    Object.entries(PIPE_SPANS).map(([name, span]) => [
      name,
      roundSummary(
        summarize(
          samples.flatMap((p) => {
            const v = span(p);
            return v === undefined ? [] : [v];
          }),
        ),
      ),
    ]),
  );
}

/** performance.now() ms of a /proc/uptime reading (seconds), from one reading of both taken now. */
export function uptimeClock(): (uptimeSeconds: number) => number {
  const now = performance.now();
  const uptime = Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]);
  return (u) => now + (u - uptime) * 1000;
}

/** The init container's file, "<start> <end>" (/proc/uptime's seconds), on the bench's clock. */
export function initRun(file: string, clock: (uptimeSeconds: number) => number): PipeSample["init"] {
  const m = /^(\d+(?:\.\d+)?) (\d+(?:\.\d+)?)$/.exec(file.trim());
  if (!m) return undefined;
  const [start, end] = [clock(Number(m[1])), clock(Number(m[2]))];
  return end < start ? undefined : { start, end };
}
