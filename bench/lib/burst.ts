// A resolver burst: what git-resolver.ts, bundle-resolver.ts and cluster-hot.ts share. The
// workload's set-up, a control plane, the same-run floor (optional; with `floorEach` again before
// every later phase), then phases of --requests requests from --concurrency clients against the
// real lifecycle-controller and one resolver process, both started once in one namespace for all
// phases; each phase's requests are deleted before the next. A benchmark gives its workload (set-up,
// the request builder, per phase a plan) and its own JSON figures, rows and markdown columns; the
// JSON result, the report (the JSON by rows), `ok` and the CSV are built here, the same for all.
import { performance } from "node:perf_hooks";
import type { ResolutionRequest } from "@quarry/api";
import { newScenario, type Scenario } from "@quarry/harness/scenario";
import type { KubeClient } from "@quarry/kube";
import type { BenchContext, Benchmark, FlagSpecs, FlagValues, Phase } from "./benchmark.ts";
import type { BenchControlPlane } from "./controlplane.ts";
import { type DocumentedFloor, documentedFloor, type FloorShape, runSameRunFloor } from "./floor.ts";
import { type PhaseResult, runPhase } from "./phase.ts";
import { type FloorRun, floorJson } from "./phase-report.ts";
import { controllerConcurrency, controlPlaneVersions, machineInfo } from "./report.ts";
import { createWithRetry, deleteRequests, SAMPLES_CSV_HEADER, type Sample, samplesCsv } from "./requests.ts";
import { type ResolverView, resolverView } from "./resolver-view.ts";
import { log, sleep } from "./run.ts";
import { logWarnings, type ServiceFigures } from "./service-stats.ts";
import { round, versus } from "./stats.ts";
import { columns, flagParams, type ValueRow, valueReport } from "./value-rows.ts";

type Percentiles = Parameters<typeof versus>[1];

type Started = Awaited<ReturnType<BenchContext<FlagSpecs>["services"]["start"]>>;

/** The flags every burst reads (loadFlags' and --closed-loop). */
type BurstFlags = {
  requests: number;
  concurrency: number;
  warmup: number;
  "log-level": string;
  "closed-loop": boolean;
};

/** The flags of a burst of resolver phases after the same-run floor: which phases, and the floor or not. */
export const phaseFlags = <const P extends readonly string[]>(phases: P) =>
  ({
    phases: {
      type: "list",
      default: phases.join(","),
      choices: phases,
      help: "a subset of the phases (always run in that order)",
    },
    floor: { type: "boolean", default: true, help: "skip the same-run floor" },
  }) as const;

/** What a workload says about one phase before it runs. */
export interface PhasePlan<X> {
  definition: string;
  /** warm-up requests (default --warmup) */
  warmup?: number;
  /** request `name`; `warm`: a warm-up request */
  request(namespace: string, name: string, i: number, warm: boolean): ResolutionRequest;
  /** just before the first measured request is sent: where the workload's own counts start */
  open?(): void;
  /** the workload's figures of the phase, before its requests are deleted */
  close(p: PhaseResult): X | Promise<X>;
}

export interface BurstPhase<X> {
  name: string;
  definition: string;
  phase: PhaseResult;
  /** with floorEach: the floor measured just before this phase (the first phase's: the run's first) */
  adjacentFloor: FloorRun | undefined;
  x: X;
}

export interface Step<X> {
  floor?: FloorRun;
  burst?: BurstPhase<X>;
}

/** The resolver's namespace and the two services, started once for every phase. */
export type ResolverUp = { scn: Scenario; lc: Started; resolver: Started };

export interface BurstState<S> {
  s: S;
  versions: Record<string, string>;
  plane: BenchControlPlane;
  resolverUp: () => Promise<ResolverUp>;
}

/** The workload's JSON figures of a phase: merged into the phase's JSON, `resolver` into its resolver view. */
export type PhaseExtra = { resolver?: object } & Record<string, unknown>;

export interface ResolverBurst<F extends FlagSpecs, S, X, E extends PhaseExtra> {
  name: string;
  about: string;
  deadline: number;
  flags: F;
  notes?: string;
  /** the resolver's service name and its resolution type (its /metrics' `type` label) */
  resolver: string;
  type: string;
  /** its namespace's name prefix */
  namespace: string;
  phaseNames(f: FlagValues<F>): readonly string[];
  withFloor(f: FlagValues<F>): boolean;
  floorEach?(f: FlagValues<F>): boolean;
  floorShape?(s: S, f: FlagValues<F>): FloorShape | undefined;
  controlPlane?: { tekton?: boolean };
  /** resources whose API calls are counted (default: ResolutionRequests and Events) */
  resources?: readonly string[];
  /** the versions besides the control plane's, in the JSON's `machine` */
  versions?(): Record<string, string>;
  /** the workload's set-up, before the control plane starts */
  setup(ctx: BenchContext<F>): Promise<S>;
  /** the resolver's namespace before the services start (ConfigMaps, objects it serves) */
  configure?(scn: Scenario, s: S, ctx: BenchContext<F>, plane: BenchControlPlane): Promise<void>;
  /** the resolver's environment */
  env?(s: S, ctx: BenchContext<F>): Record<string, string>;
  /** processes besides the services and the control plane whose CPU counts */
  pids?(s: S): Record<string, number | undefined>;
  plan(ctx: BenchContext<F>, s: S, name: string, up: ResolverUp): PhasePlan<X> | Promise<PhasePlan<X>>;
  /** the JSON params besides the flags' */
  params?(f: FlagValues<F>, s: S): object;
  /** top-level JSON fields (e.g. the repository, the bundles pushed) */
  top?(s: S): object;
  /** the workload's figures of a phase in the JSON */
  phaseJson?(x: X, p: PhaseResult, b: BurstPhase<X>): E;
  /** the report's rows before the phases */
  headRows?(s: S): ValueRow[];
  /** the markdown table's columns after the common ones */
  columns?: readonly Column<BurstPhaseJson<E>>[];
}

/** A markdown column: its header and each phase's cell. */
export type Column<J> = readonly [header: string, cell: (j: J) => unknown];

const sum = (xs: Iterable<number>) => [...xs].reduce((a, b) => a + b, 0);

/** CPU ms per request: the resolver's, `extra` seconds' (outside the run's processes), the lifecycle controller's, kube-apiserver's, all. */
export function cpuMsPerRequest<K extends string = never>(
  p: PhaseResult,
  resolver: string,
  extra = {} as Record<K, number>,
) {
  const c = p.cpu.processes;
  const per = (seconds = 0) => round((seconds * 1000) / Math.max(1, p.completed), 2);
  const named = Object.entries<number>(extra).map(([k, v]) => [k, per(v)]);
  return {
    resolver: per(c[resolver]),
    ...(Object.fromEntries(named) as Record<K, number>),
    lifecycleController: per(c["lifecycle-controller"]),
    kubeApiserver: per(c["kube-apiserver"]),
    all: per(sum([...Object.values(c), p.cpu.benchDriver, ...Object.values<number>(extra)])),
  };
}

/** How a phase went: completions, latency (with its split), throughput, the timeline. */
export const outcomeJson = (p: PhaseResult) => ({
  completed: p.completed,
  failed: p.failed,
  incomplete: p.incomplete,
  failures: p.failures,
  latencyMs: p.latencyMs,
  breakdown: p.breakdown,
  wallSeconds: p.wallSeconds,
  throughputPerSecond: p.throughputPerSecond,
  timeline: p.timeline,
});

/** A phase's latency and throughput over a floor's. */
export const overFloor = (p: PhaseResult, lat: Percentiles, throughputPerSecond: number) => ({
  latencyMs: versus(p.latencyMs, lat),
  throughputRatio: round(p.throughputPerSecond / throughputPerSecond, 2),
});

function commonPhaseJson(p: PhaseResult, floor: FloorRun | undefined, documented: DocumentedFloor | Error) {
  return {
    ...outcomeJson(p),
    apiCalls: p.apiCalls,
    logLines: Object.fromEntries(Object.entries(p.services).map(([k, v]) => [k, v.logLines])),
    client: p.client,
    overFloor: {
      sameRun: floor ? overFloor(p, floor.phase.latencyMs, floor.phase.throughputPerSecond) : undefined,
      documented:
        documented instanceof Error
          ? { error: documented.message }
          : overFloor(p, documented, documented.throughputPerSecond),
    },
    cpuSecondsMeasured: p.cpu as object,
    cpuMsPerRequest: {} as Record<string, number>,
  };
}

export type BurstPhaseJson<E extends PhaseExtra> = ReturnType<typeof commonPhaseJson> &
  Omit<E, "resolver"> & { name: string; definition: string; resolver: Partial<ResolverView> & E["resolver"] };

export interface BurstResult<E extends PhaseExtra> {
  benchmark: string;
  date: string;
  params: object;
  phases: BurstPhaseJson<E>[];
  controllers: Record<string, ServiceFigures>;
  resolverWarnings: Record<string, number>;
  floor: ReturnType<typeof floorJson>;
  documentedFloor: DocumentedFloor | { error: string };
  machine: ReturnType<typeof machineInfo>;
  setupSeconds: number;
}

export const floorOf = <X>(steps: readonly Step<X>[]) => steps.find((s) => s.floor)?.floor;
export const burstsOf = <X>(steps: readonly Step<X>[]) => steps.flatMap((s) => (s.burst ? [s.burst] : []));
/** every step's measured phase, the floor's first */
const measured = <X>(steps: readonly Step<X>[]) =>
  steps.flatMap((s) => (s.floor ? [{ name: "floor", phase: s.floor.phase }] : s.burst ? [s.burst] : []));

/** A resolver burst as a benchmark definition for runBenchmark. */
export function resolverBurst<
  const F extends FlagSpecs,
  S,
  X,
  E extends PhaseExtra = PhaseExtra,
  R extends object = BurstResult<E>,
>(
  def: ResolverBurst<F, S, X, E> &
    Partial<Pick<Benchmark<F, BurstState<S>, Step<X>, R>, "result" | "report">>,
): Benchmark<F, BurstState<S>, Step<X>, R> {
  const flagsOf = (ctx: BenchContext<F>) => ctx.flags as unknown as BurstFlags & FlagValues<F>;
  const burst: Benchmark<F, BurstState<S>, Step<X>, BurstResult<E>> = {
    name: def.name,
    about: def.about,
    deadline: def.deadline,
    flags: def.flags,
    notes: def.notes,

    async setup(ctx) {
      const versions = { ...controlPlaneVersions(), ...def.versions?.() };
      const s = await def.setup(ctx);
      const plane = await ctx.controlPlane(def.controlPlane);
      let up: ReturnType<BurstState<S>["resolverUp"]> | undefined;
      const resolverUp = () => {
        up ??= (async () => {
          const scn = await newScenario(def.namespace, { cp: plane.info });
          await def.configure?.(scn, s, ctx, plane);
          const lc = await ctx.services.start(scn, "lifecycle-controller");
          const resolver = await ctx.services.start(scn, def.resolver, def.env?.(s, ctx));
          return { scn, lc, resolver };
        })();
        return up;
      };
      return { s, versions, plane, resolverUp };
    },

    phases(ctx, { s, plane, resolverUp }) {
      const f = flagsOf(ctx);
      const n = f.requests;
      const clientStats = { retries: 0 };
      const sizes = {
        concurrency: f.concurrency,
        requests: n,
        signal: ctx.signal,
        closedLoop: f["closed-loop"],
      };
      const withFloor = def.withFloor(f);
      const measureFloor = () =>
        runSameRunFloor({
          ...sizes,
          warmup: f.warmup,
          plane,
          services: ctx.services,
          clientStats,
          shape: def.floorShape?.(s, f),
        });
      let first: FloorRun | undefined;
      const burst = (name: string, k: number): Phase<Step<X>> => ({
        name,
        stop: (x) => (x.burst?.phase.completed ?? 0) < n,
        run: async () => {
          // each phase is also compared with a floor measured just before it: the machine's speed drifts
          const adjacentFloor = withFloor && def.floorEach?.(f) && k > 0 ? await measureFloor() : first;
          const up = await resolverUp();
          const { scn, lc, resolver } = up;
          const plan = await def.plan(ctx, s, name, up);
          const warmup = plan.warmup ?? f.warmup;
          let opened = false;
          const send = async (client: KubeClient, reqName: string, i: number, x: Sample) => {
            const warm = reqName.startsWith("warm-");
            if (!warm && !opened) {
              opened = true;
              plan.open?.();
            }
            await createWithRetry(
              client,
              plan.request(scn.namespace, reqName, i, warm),
              clientStats,
              ctx.signal,
            );
            x.created = performance.now();
          };
          const p = await runPhase({
            ...sizes,
            warmup,
            name,
            cp: plane.cp,
            namespace: scn.namespace,
            services: [lc.svc, resolver.svc],
            pids: { ...plane.pids, ...def.pids?.(s) },
            send,
            resources: def.resources ?? ["resolutionrequests", "events"],
          });
          const x = await plan.close(p);
          const l = p.latencyMs;
          log(
            `${name}: p50 ${l.p50} ms, p99 ${l.p99} ms, ${p.throughputPerSecond} requests/s (${p.completed}/${n})`,
          );
          // the next phase's informers start empty
          const warm = Array.from({ length: warmup }, (_, i) => `warm-${String(i).padStart(5, "0")}`);
          await deleteRequests(
            plane.admin,
            scn.namespace,
            [...warm, ...p.batch.samples.map((x) => x.name)],
            ctx.signal,
          );
          await sleep(1000);
          return { burst: { name, definition: plan.definition, phase: p, adjacentFloor, x } };
        },
      });
      const floor: Phase<Step<X>> = {
        name: "floor",
        run: async () => {
          first = await measureFloor();
          return { floor: first };
        },
      };
      return [...(withFloor ? [floor] : []), ...def.phaseNames(f).map(burst)];
    },

    async result(ctx, { s, versions, resolverUp }, steps) {
      const f = flagsOf(ctx);
      const floor = floorOf(steps);
      const bursts = burstsOf(steps);
      const { lc, resolver } = await resolverUp();
      const documented = documentedFloor();
      return {
        benchmark: def.name,
        date: new Date().toISOString(),
        params: {
          ...flagParams(f, { floor: "withFloor" }),
          phases: def.phaseNames(f),
          withFloor: def.withFloor(f),
          controllerConcurrency: controllerConcurrency(),
          ...def.params?.(f, s),
        },
        ...def.top?.(s),
        phases: bursts.map((b) => {
          const p = b.phase;
          const { resolver: rv, ...extra } = def.phaseJson?.(b.x, p, b) ?? ({} as E);
          const common = commonPhaseJson(p, floor, documented);
          common.cpuMsPerRequest = cpuMsPerRequest(p, def.resolver);
          return {
            name: b.name,
            definition: b.definition,
            ...common,
            ...extra,
            resolver: { ...resolverView(p, def.resolver, def.type), ...rv },
          } as BurstPhaseJson<E>;
        }),
        controllers: {
          "lifecycle-controller": await lc.stats.final(),
          [def.resolver]: await resolver.stats.final(),
        },
        resolverWarnings: logWarnings(resolver.svc),
        floor: floorJson(floor),
        documentedFloor: documented instanceof Error ? { error: documented.message } : documented,
        machine: machineInfo(versions),
        setupSeconds: round(((bursts[0]?.phase.batch.start ?? performance.now()) - ctx.startedAt) / 1000, 1),
      };
    },

    report(r, _ctx, st) {
      type Line = BurstPhaseJson<E> | (NonNullable<typeof r.floor> & { name: string });
      const ofPhase = ([h, cell]: Column<BurstPhaseJson<E>>): Column<Line> => [
        h,
        (j) => ("definition" in j ? cell(j) : ""),
      ];
      const md = columns<Line>(
        [
          ["phase", (j) => j.name],
          ["p50 ms", (j) => j.latencyMs.p50],
          ["p90 ms", (j) => j.latencyMs.p90],
          ["p99 ms", (j) => j.latencyMs.p99],
          ["max ms", (j) => j.latencyMs.max],
          ["req/s", (j) => j.throughputPerSecond],
          ...(
            [
              ["resolver in-process mean ms", (j) => j.resolver.meanMs],
              ["over floor p50 ms", (j) => j.overFloor.sameRun?.latencyMs.p50],
              ...(def.columns ?? []),
            ] as Column<BurstPhaseJson<E>>[]
          ).map(ofPhase),
        ],
        [...(r.floor ? [{ ...r.floor, name: "floor" }] : []), ...r.phases],
      );
      return valueReport(
        [
          ...(def.headRows?.(st.s) ?? []),
          ...r.phases.map(({ name, ...j }): ValueRow => [name, j]),
          ["floor (same run)", r.floor ?? "skipped"],
          ["controllers", r.controllers],
          [`${def.resolver} warnings`, r.resolverWarnings],
          ["machine", r.machine],
        ],
        md.header,
        md.rows,
      );
    },

    ok: (_r, ctx, _s, steps) =>
      burstsOf(steps).length === def.phaseNames(flagsOf(ctx)).length &&
      measured(steps).every((m) => m.phase.completed === flagsOf(ctx).requests),
    samples: (_s, steps) =>
      SAMPLES_CSV_HEADER +
      measured(steps)
        .map((m) => samplesCsv(m.phase.batch, m.name))
        .join(""),
  };
  return {
    ...burst,
    result: def.result ?? burst.result,
    report: def.report ?? burst.report,
  } as unknown as Benchmark<F, BurstState<S>, Step<X>, R>;
}
