// Quarry's two ways to run, as a benchmark starts them: `fleet`, one process per service (each
// service's chart), or `all-in-one`, one process of services/all-in-one running the components
// (the umbrella chart's global.mode=all-in-one). Either from the sources or as the images run
// them (--as-image: each image's tree, `pnpm deploy`ed, relinked and type-stripped to .js), with
// the NODE_OPTIONS the charts set.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { COMPONENT_OF } from "@quarry/devcluster/all-in-one";
import { repoRoot } from "@quarry/devcluster/paths";
import type { RunningService } from "@quarry/devcluster/service";
import { allInOneIdentity } from "@quarry/harness/all-in-one-scenario";
import type { Scenario } from "@quarry/harness/scenario";
import { deployServiceTree } from "@quarry/image-builder/build-layout";
import yaml from "js-yaml";
import { log } from "./run.ts";
import type { BenchServices } from "./service-stats.ts";

export const QUARRY_MODES = ["fleet", "all-in-one"] as const;
export type QuarryMode = (typeof QUARRY_MODES)[number];

/** --mode's values: one mode, or both in turn. */
export const MODE_CHOICES = [...QUARRY_MODES, "both"] as const;
export const modesOf = (flag: string): QuarryMode[] =>
  flag === "both" ? [...QUARRY_MODES] : [flag as QuarryMode];

interface ProcessValues {
  nodeOptions?: string;
  concurrency?: number | string;
}

interface ChartValues extends ProcessValues {
  allInOne?: ProcessValues;
}

/** The values that shape a service's process: its chart's, or the umbrella's allInOne. */
function processValues(service: string): ProcessValues {
  const chart = service === "all-in-one" ? "quarry" : service;
  const values = yaml.load(
    readFileSync(join(repoRoot, "charts", chart, "values.yaml"), "utf8"),
  ) as ChartValues;
  return (service === "all-in-one" ? values.allInOne : values) ?? {};
}

/** QUARRY_CONCURRENCY as the chart sets it (nothing when its value is empty). */
export function chartConcurrency(service: string): Record<string, string> {
  const c = processValues(service).concurrency;
  return c === undefined || c === "" ? {} : { QUARRY_CONCURRENCY: String(c) };
}

/**
 * The NODE_OPTIONS a chart sets: `charts/<service>/values.yaml`'s nodeOptions, or for the
 * all-in-one process the umbrella's allInOne.nodeOptions. QUARRY_SERVICE_NODE_OPTIONS replaces
 * both (an A/B; "" for Node's defaults), as for every service a test starts.
 */
export function chartNodeOptions(service: string): string {
  const override = process.env.QUARRY_SERVICE_NODE_OPTIONS;
  if (override !== undefined) return override;
  return processValues(service).nodeOptions ?? "";
}

export interface StartedQuarry {
  /** the processes, by name: the services, or the one "all-in-one" */
  procs: { name: string; pid: number; svc: RunningService }[];
  stop(): Promise<void>;
}

export interface StartQuarryOptions {
  mode: QuarryMode;
  /** the services (fleet) or components' services (all-in-one) to run */
  services: readonly string[];
  /** run from each image's tree under this directory (deployed once, on first use) */
  imageDir?: string;
  /** each service's env; all-in-one runs with every one of them merged */
  env?: (service: string) => Record<string, string>;
}

const deployed = new Map<string, Promise<void>>();

/** The image tree's entry of `service` under `imageDir`, deployed there once. */
async function imageEntry(imageDir: string, service: string): Promise<string> {
  const dir = join(imageDir, service);
  let done = deployed.get(dir);
  if (!done) {
    log(`pnpm deploy ${service}, relinked, type-stripped and bundled`);
    done = deployServiceTree(service, dir);
    deployed.set(dir, done);
  }
  await done;
  return join(dir, "src", "main.js");
}

/** Starts Quarry in `opts.mode` in the scenario's namespace and waits until every process is ready. */
export async function startQuarry(
  services: BenchServices,
  scn: Scenario,
  opts: StartQuarryOptions,
): Promise<StartedQuarry> {
  const envOf = opts.env ?? (() => ({}));
  const entryOf = (service: string) => (opts.imageDir ? imageEntry(opts.imageDir, service) : undefined);
  const started: { name: string; pid: number; svc: RunningService }[] = [];
  if (opts.mode === "fleet") {
    for (const name of opts.services) {
      const env = { NODE_OPTIONS: chartNodeOptions(name), ...envOf(name) };
      const { svc } = await services.start(scn, name, env, { entry: await entryOf(name) });
      started.push({ name, pid: svc.pid, svc });
    }
  } else {
    await allInOneIdentity(scn);
    const components = opts.services.map((s) => {
      const c = COMPONENT_OF[s];
      if (!c) throw new Error(`all-in-one: ${s} is no component`);
      return c;
    });
    const env = {
      NODE_OPTIONS: chartNodeOptions("all-in-one"),
      ...chartConcurrency("all-in-one"),
      ...Object.assign({}, ...opts.services.map(envOf)),
      QUARRY_COMPONENTS: components.join(","),
    };
    // discovery, every component's ConfigMap and informers before /readyz: more than one service's start
    const { svc } = await services.start(scn, "all-in-one", env, {
      entry: await entryOf("all-in-one"),
      identity: "all-in-one",
      readyTimeoutMs: 60_000,
    });
    started.push({ name: "all-in-one", pid: svc.pid, svc });
  }
  return { procs: started, stop: () => services.stop(started.map((p) => p.svc)) };
}
