// The one shape every benchmark has: typed flags (with defaults and help, so
// --help is generated), set-up, measured phases, a JSON result and a text
// report, and teardown, always: on success, failure, the global deadline or
// Ctrl-C. A benchmark file is a `runBenchmark({...})` call; what the runner
// does it does the same way for all of them.
import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { errorMessage } from "@quarry/kube";
import { type BenchControlPlane, startBenchControlPlane } from "./controlplane.ts";
import { BoundedRun, log } from "./run.ts";
import { BenchServices } from "./service-stats.ts";
import { round } from "./stats.ts";

// ---- flags ----

interface FlagBase {
  help: string;
  /** the value's name in --help (default N for numbers, S for strings, LIST for lists) */
  arg?: string;
}
export type FlagSpec = FlagBase &
  (
    | { type: "int"; default?: number; min?: number }
    | { type: "number"; default?: number; min?: number }
    | { type: "string"; default?: string; choices?: readonly string[] }
    /** `--x` / `--no-x` */
    | { type: "boolean"; default?: boolean }
    /** comma-separated; with `choices`, returned in the choices' order */
    | { type: "list"; default: string; choices?: readonly string[] }
    /** comma-separated integers, in the order given */
    | { type: "ints"; default: string; min?: number }
    /** repeatable */
    | { type: "multiple" }
  );
export type FlagSpecs = Record<string, FlagSpec>;

type ValueOf<S extends FlagSpec> = S extends { type: "int" | "number" }
  ? S extends { default: number }
    ? number
    : number | undefined
  : S extends { type: "boolean" }
    ? boolean
    : S extends { type: "list" | "multiple" }
      ? string[]
      : S extends { type: "ints" }
        ? number[]
        : S extends { default: string }
          ? string
          : string | undefined;
export type FlagValues<F extends FlagSpecs> = { -readonly [K in keyof F]: ValueOf<F[K]> };

/** What every benchmark accepts besides its own flags. */
const standardFlags = (deadline: number) =>
  ({
    deadline: {
      type: "int",
      default: deadline,
      min: 10,
      arg: "S",
      help: "the whole run stops after S seconds, torn down either way",
    },
    json: { type: "string", arg: "FILE", help: "also write the JSON result to FILE" },
  }) as const;
type Standard = ReturnType<typeof standardFlags>;

/** The flags of a load benchmark: how many requests, how many clients, warm-up, log level, timelines. */
export const loadFlags = (requests: number, help = "measured requests") =>
  ({
    requests: { type: "int", default: requests, min: 1, help },
    concurrency: { type: "int", default: 16, min: 1, help: "in-flight clients, each its own connection" },
    warmup: { type: "int", default: 20, min: 0, help: "requests sent and discarded first; 0 disables" },
    "log-level": { type: "string", default: "info", arg: "L", help: "the services' LOG_LEVEL" },
    samples: { type: "string", arg: "FILE", help: "per-request timelines as CSV" },
  }) as const;

export class FlagError extends Error {}

/** --help's text: a usage line, the benchmark's paragraph, one line per flag, and notes. */
export function usage(name: string, about: string, flags: FlagSpecs, notes = ""): string {
  const left = (k: string, f: FlagSpec) =>
    f.type === "boolean" ? (f.default ? `--no-${k}` : `--${k}`) : `--${k} ${f.arg ?? defaultArg(f)}`;
  const w = Math.max(...Object.entries(flags).map(([k, f]) => left(k, f).length));
  const lines = Object.entries(flags).map(([k, f]) => {
    const d =
      "default" in f && f.default !== undefined && f.type !== "boolean" ? ` (default ${f.default})` : "";
    return `  ${left(k, f).padEnd(w)}  ${f.help}${d}`;
  });
  return [`usage: node bench/${name}.ts [options]`, about, "", ...lines, `  ${"--help".padEnd(w)}  this text`]
    .concat(notes ? ["", notes] : [])
    .join("\n");
}

const defaultArg = (f: FlagSpec) =>
  f.type === "list" || f.type === "ints" ? "LIST" : f.type === "int" || f.type === "number" ? "N" : "S";

/** Parses `argv` by `flags`; a bad value throws a FlagError saying which and why. */
export function parseFlags<F extends FlagSpecs>(
  flags: F,
  argv: readonly string[],
): FlagValues<F> & { help: boolean } {
  const options: Record<string, { type: "string" | "boolean"; multiple?: boolean; short?: string }> = {
    help: { type: "boolean", short: "h" },
  };
  for (const [k, f] of Object.entries(flags)) {
    options[k] =
      f.type === "boolean" ? { type: "boolean" } : { type: "string", multiple: f.type === "multiple" };
  }
  let values: Record<string, unknown>;
  try {
    values = parseArgs({ args: [...argv], options, allowNegative: true, strict: true }).values;
  } catch (err) {
    throw new FlagError(errorMessage(err));
  }
  const out: Record<string, unknown> = { help: values.help === true };
  for (const [k, f] of Object.entries(flags)) out[k] = flagValue(k, f, values[k]);
  return out as FlagValues<F> & { help: boolean };
}

function flagValue(name: string, f: FlagSpec, raw: unknown): unknown {
  const bad = (why: string) => new FlagError(`--${name} ${why}, got "${String(raw)}"`);
  const num = (s: string, integer: boolean, min: number | undefined) => {
    const n = Number(s);
    if (s.trim() === "" || !Number.isFinite(n) || (integer && !Number.isInteger(n)))
      throw bad(`must be ${integer ? "an integer" : "a number"}`);
    if (min !== undefined && n < min) throw bad(`must be at least ${min}`);
    return n;
  };
  switch (f.type) {
    case "boolean":
      return typeof raw === "boolean" ? raw : (f.default ?? false);
    case "multiple":
      return (raw as string[] | undefined) ?? [];
    case "int":
    case "number":
      return raw === undefined ? f.default : num(raw as string, f.type === "int", f.min);
    case "ints":
      return String(raw ?? f.default)
        .split(",")
        .map((s) => num(s, true, f.min));
    case "list": {
      const items = String(raw ?? f.default)
        .split(",")
        .map((s) => s.trim());
      if (!f.choices) return items;
      const unknown = items.find((s) => !f.choices?.includes(s));
      if (unknown !== undefined)
        throw bad(`takes a subset of ${f.choices.join(",")} ("${unknown}" is not one)`);
      return f.choices.filter((c) => items.includes(c));
    }
    case "string": {
      const v = (raw as string | undefined) ?? f.default;
      if (v !== undefined && f.choices && !f.choices.includes(v))
        throw bad(`must be one of ${f.choices.join(", ")}`);
      return v;
    }
  }
}

// ---- the run ----

export interface BenchContext<F extends FlagSpecs> {
  flags: FlagValues<F & Standard>;
  /** aborts at the deadline or on SIGINT/SIGTERM */
  signal: AbortSignal;
  run: BoundedRun;
  /** performance.now() when the run started */
  startedAt: number;
  /** the services this run starts (stopped at teardown) */
  services: BenchServices;
  /** `fn` runs at teardown, last registered first, whatever happened before */
  defer(fn: () => unknown): void;
  /** etcd + kube-apiserver with Quarry's API, stopped at teardown */
  controlPlane(opts?: Parameters<typeof startBenchControlPlane>[2]): Promise<BenchControlPlane>;
}

export interface Benchmark<F extends FlagSpecs, S, P, R extends object> {
  /** the file's name: `node bench/<name>.ts` */
  name: string;
  /** --help's paragraph */
  about: string;
  flags: F;
  /** --deadline's default, seconds */
  deadline: number;
  /** after the flags in --help */
  notes?: string;
  /** starts what is measured (registering its teardown with ctx.defer) */
  setup(ctx: BenchContext<F>): Promise<S>;
  /** the measured phases, run in order until one returns `stop` or the run is stopped */
  phases(ctx: BenchContext<F>, s: S): readonly Phase<P>[];
  /** the JSON result, from the phases that ran */
  result(ctx: BenchContext<F>, s: S, phases: readonly P[]): R | Promise<R>;
  /** the text before the JSON line */
  report(r: R, ctx: BenchContext<F>, s: S, phases: readonly P[]): string;
  /** exit status 0 only if this holds (and the run was not stopped) */
  ok(r: R, ctx: BenchContext<F>, s: S, phases: readonly P[]): boolean;
  /** --samples' CSV */
  samples?(s: S, phases: readonly P[]): string;
}

export interface Phase<P> {
  name: string;
  run(): Promise<P>;
  /** the phases after this one are skipped if it says so (e.g. it did not complete) */
  stop?(p: P): boolean;
}

/** Runs a benchmark as the main program: parses flags, sets up, measures, reports, tears down, exits. */
export async function runBenchmark<const F extends FlagSpecs, S, P, R extends object>(
  def: Benchmark<F, S, P, R>,
): Promise<never> {
  const all = { ...def.flags, ...standardFlags(def.deadline) } as F & Standard;
  const help = usage(def.name, def.about, all, def.notes);
  let flags: FlagValues<F & Standard> & { help: boolean };
  try {
    flags = parseFlags(all, process.argv.slice(2));
  } catch (err) {
    console.error(`${errorMessage(err)}\n${help}`);
    process.exit(2);
  }
  if (flags.help) {
    console.log(help);
    process.exit(0);
  }
  const run = new BoundedRun(flags.deadline);
  const deferred: (() => unknown)[] = [];
  const logLevel = (flags as Record<string, unknown>)["log-level"];
  const ctx: BenchContext<F> = {
    flags,
    signal: run.signal,
    run,
    startedAt: performance.now(),
    services: new BenchServices(run, typeof logLevel === "string" ? logLevel : "info"),
    defer: (fn) => deferred.push(fn),
    controlPlane: (opts) => startBenchControlPlane(run, (cp) => deferred.push(() => cp.stop()), opts),
  };
  let exitCode = 1;
  try {
    const s = await def.setup(ctx);
    const done: P[] = [];
    for (const phase of def.phases(ctx, s)) {
      if (run.signal.aborted) break;
      const p = await phase.run();
      done.push(p);
      if (phase.stop?.(p)) break;
    }
    run.finish();
    const result = await def.result(ctx, s, done);
    const aborted = run.signal.aborted ? errorMessage(run.signal.reason) : undefined;
    if (aborted) Object.assign(result, { aborted });
    console.log(`\n${def.report(result, ctx, s, done)}\n`);
    console.log(JSON.stringify(result));
    if (flags.json) writeFileSync(flags.json, `${JSON.stringify(result, null, 2)}\n`);
    const samplesFile = (flags as Record<string, unknown>).samples;
    if (typeof samplesFile === "string" && def.samples) writeFileSync(samplesFile, def.samples(s, done));
    if (aborted) log(`run stopped early: ${aborted}`);
    exitCode = def.ok(result, ctx, s, done) && !aborted ? 0 : 1;
  } catch (err) {
    if (err instanceof FlagError) {
      console.error(`${err.message}\n${help}`);
      exitCode = 2;
    } else log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  } finally {
    run.finish();
    // the services first: they talk to what was set up before them
    for (const fn of [() => ctx.services.stopAll(), ...deferred.reverse()]) {
      try {
        await fn();
      } catch (err) {
        log(`teardown: ${errorMessage(err)}`);
      }
    }
    log(`torn down after ${round((performance.now() - ctx.startedAt) / 1000, 1)} s`);
  }
  process.exit(exitCode);
}

/** A single measured phase. */
export const onePhase = <P>(name: string, run: () => Promise<P>): Phase<P>[] => [{ name, run }];

/** `fn`'s first call's promise, shared by every later call (e.g. a service a later phase starts). */
export function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => {
    p ??= fn();
    return p;
  };
}
