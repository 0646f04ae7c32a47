// The lifecycle floor as other benchmarks compare against it: the floor's
// client (create, then write status.data itself: an instant resolver), and
// the floor's published figures (the median row in docs/performance.md).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { LABEL_RESOLVER_TYPE, resolutionRequests } from "@quarry/api";
import { repoRoot } from "@quarry/devcluster/paths";
import { newRequest, newScenario } from "@quarry/harness/scenario";
import { errorMessage, type KubeClient } from "@quarry/kube";
import type { BenchControlPlane } from "./controlplane.ts";
import { type PhaseResult, runPhase } from "./phase.ts";
import { createWithRetry, type Sample, withRetry } from "./requests.ts";
import { log } from "./run.ts";
import { type BenchServices, type ServiceFigures, stopService } from "./service-stats.ts";

/** What the floor's client writes as status.data: a small Task. */
export const FLOOR_DATA = Buffer.from(
  "apiVersion: tekton.dev/v1\nkind: Task\nmetadata:\n  name: hello\nspec:\n  steps:\n    - name: echo\n      image: alpine\n      script: echo hello\n",
).toString("base64");

/**
 * What the floor's request i carries and what its client writes as the resolver: by default no
 * params and a small Task as status.data; a benchmark may give the floor its own requests' shape.
 */
export type FloorShape = (i: number) => { params?: Record<string, string>; status: Record<string, unknown> };

/** The floor's per-request client: create (labelled git, no resolver runs), then write the status. */
export function floorSend(
  namespace: string,
  stats: { retries: number },
  signal: AbortSignal,
  shape: FloorShape = () => ({ status: { data: FLOOR_DATA } }),
) {
  return async (client: KubeClient, name: string, i: number, s: Sample): Promise<void> => {
    const { params, status } = shape(i);
    await createWithRetry(
      client,
      newRequest(namespace, name, { [LABEL_RESOLVER_TYPE]: "git" }, params),
      stats,
      signal,
    );
    s.created = performance.now();
    await withRetry(
      () => client.mergePatch(resolutionRequests, namespace, name, { status }, "status"),
      stats,
      signal,
    );
    s.patched = performance.now();
  };
}

export interface DocumentedFloor {
  source: string;
  /** the documented command's parameters (bench/lifecycle-floor.ts defaults) */
  requests: number;
  concurrency: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  wallSeconds: number;
  throughputPerSecond: number;
}

/**
 * The median row of the first figures table under "## Lifecycle controller:
 * API floor" in docs/performance.md (the current default's runs), or an
 * error saying what was not found.
 */
export function documentedFloor(file = join(repoRoot, "docs", "performance.md")): DocumentedFloor | Error {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    return new Error(`cannot read ${file}: ${(err as Error).message}`);
  }
  const section = text.split(/^## /m).find((s) => s.startsWith("Lifecycle controller: API floor"));
  if (!section) return new Error(`no "## Lifecycle controller: API floor" section in ${file}`);
  const lines = section.split("\n");
  const headerAt = lines.findIndex((l) => l.startsWith("| run") && l.includes("p50 ms"));
  if (headerAt < 0) return new Error(`no figures table in the floor section of ${file}`);
  const cells = (l: string) =>
    l
      .split("|")
      .slice(1, -1)
      .map((c) => c.trim().replaceAll("*", ""));
  const header = cells(lines[headerAt]!);
  const end = lines.findIndex((l, i) => i > headerAt && !l.startsWith("|"));
  const rows = lines.slice(headerAt + 2, end < 0 ? undefined : end).map(cells);
  const median = rows.findLast((row) => row[0]?.startsWith("median"));
  if (!median) return new Error(`no median row in the floor's figures table in ${file}`);
  const col = (name: string) => {
    const at = header.indexOf(name);
    return at < 0 ? Number.NaN : Number(median[at]);
  };
  const floor: DocumentedFloor = {
    source: "docs/performance.md, lifecycle floor, median of the current default's runs",
    requests: 500,
    concurrency: 16,
    p50: col("p50 ms"),
    p90: col("p90 ms"),
    p99: col("p99 ms"),
    max: col("max ms"),
    wallSeconds: col("wall s"),
    throughputPerSecond: col("req/s"),
  };
  if (Number.isNaN(floor.p50)) return new Error(`the floor's median row in ${file} has no p50`);
  return floor;
}

/**
 * The floor measured in the same run, on the same control plane: its own
 * namespace and lifecycle-controller (stopped afterwards), the floor's client.
 */
export async function runSameRunFloor(opts: {
  plane: Pick<BenchControlPlane, "info" | "cp" | "pids">;
  services: Pick<BenchServices, "start">;
  concurrency: number;
  warmup: number;
  requests: number;
  signal: AbortSignal;
  clientStats: { retries: number };
  closedLoop?: boolean;
  shape?: FloorShape | undefined;
}): Promise<{ phase: PhaseResult; controller: ServiceFigures }> {
  const fscn = await newScenario("bench-floor", { cp: opts.plane.info });
  const lc = await opts.services.start(fscn, "lifecycle-controller");
  const phase = await runPhase({
    name: "floor",
    cp: opts.plane.cp,
    namespace: fscn.namespace,
    services: [lc.svc],
    pids: opts.plane.pids,
    concurrency: opts.concurrency,
    warmup: opts.warmup,
    requests: opts.requests,
    signal: opts.signal,
    send: floorSend(fscn.namespace, opts.clientStats, opts.signal, opts.shape),
    closedLoop: opts.closedLoop,
  });
  const controller = await lc.stats.final();
  await stopService(lc.svc);
  if (opts.signal.aborted) throw new Error(`floor phase: ${errorMessage(opts.signal.reason)}`);
  log(`floor: p50 ${phase.latencyMs.p50} ms, ${phase.throughputPerSecond} requests/s; controller stopped`);
  return { phase, controller };
}
