// Which e2e scenario files run in which mode (docs/testing.md, "Both modes"). Every file runs in
// the fleet mode. In all-in-one mode (QUARRY_E2E_MODE=all-in-one) the services a file starts that
// are components of services/all-in-one run in one process (dev/devcluster/src/all-in-one.ts);
// every file runs so except those below, each with the reason it cannot.

const CONVERSION =
  "the lifecycle controller's conversion webhook, which all-in-one mode does not serve (the chart refuses conversionWebhook.enabled with global.mode=all-in-one)";

const REPLICAS =
  "replicas of one service and their own bucket Leases (dev/harness/src/replicas.ts starts them as that service's processes in either mode); the all-in-one process has one set of buckets for every component";

/** Files that cannot run in all-in-one mode, by name (without `.test.ts`), and why. */
export const FLEET_ONLY: Readonly<Record<string, string>> = {
  "all-in-one": "starts the all-in-one process itself: the same test in both modes, run once",
  "conversion-body-limit": CONVERSION,
  "conversion-v1alpha1-roundtrip": CONVERSION,
  "conversion-webhook-down": CONVERSION,
  "hostile-input":
    "its status-policy row writes as each resolver's own ServiceAccount, which the quarry-<resolver>-writes admission policies name; in all-in-one mode no process runs as one (the rest of the sweep passes in all-in-one mode)",
  "tekton-config-in-place":
    "reads the git resolver chart's fleet rendering: its Deployment's env and its Role in Tekton's namespace, bound to quarry-git-resolver",
  "ha-buckets": REPLICAS,
  "ha-rolling-update": REPLICAS,
  "ha-shard-label": REPLICAS,
};

/** Each source's resolve file, the pipe pods on the node, Wait and Pipe runs and a run's remote ref. */
const EVERY_PATH = [
  "cluster-resolve",
  "git-resolve",
  "bundle-resolve",
  "http-resolve",
  "hub-artifact",
  "pipe-resolve",
  "run-wait-succeeds",
  "run-remote-ref",
  "run-pipe-succeeds",
] as const;

/**
 * The files `pnpm test:e2e` (and so CI) also runs in all-in-one mode, beside the whole suite in
 * the fleet mode: every path (above), the lifecycle's completion and timeouts, a kill mid-work, and
 * the chaos short form.
 */
export const CI_ALL_IN_ONE = [
  ...EVERY_PATH,
  "lifecycle-complete",
  "lifecycle-timeout",
  "lifecycle-crash-recovery",
  "chaos",
] as const;

/**
 * The files `pnpm test:e2e:image` (and so CI) runs with every service from its image's tree
 * (`e2e/run.ts --as-image`: type-stripped, src/main.js bundled), in the fleet mode: every path
 * (above) and the conversion webhook, whose code the bundle loads at first use.
 */
export const CI_AS_IMAGE = [...EVERY_PATH, "conversion-v1alpha1-roundtrip"] as const;

/** The files (of `files`) in CI_AS_IMAGE: what `--as-image` runs with the default mode. */
export function ciAsImageFiles(files: readonly string[]): string[] {
  return files.filter((f) => (CI_AS_IMAGE as readonly string[]).includes(nameOf(f)));
}

/**
 * What `e2e/run.ts --mode <m>` runs: `fleet` every file as its own processes; `all-in-one` every
 * file that can (not FLEET_ONLY) in all-in-one mode; `both` the two; `ci` (the default) every file
 * in the fleet mode and CI_ALL_IN_ONE in all-in-one mode.
 */
export const RUNNER_MODES = ["ci", "fleet", "all-in-one", "both"] as const;
export type RunnerMode = (typeof RUNNER_MODES)[number];

const nameOf = (file: string) => (file.split("/").at(-1) ?? file).replace(/\.test\.ts$/, "");

/** The files (of `files`) to run in all-in-one mode for the runner's mode. */
export function allInOneFiles(files: readonly string[], mode: RunnerMode): string[] {
  if (mode === "fleet") return [];
  if (mode === "ci") return files.filter((f) => (CI_ALL_IN_ONE as readonly string[]).includes(nameOf(f)));
  return files.filter((f) => !(nameOf(f) in FLEET_ONLY));
}

/** The files to run in the fleet mode for the runner's mode. */
export const fleetFiles = (files: readonly string[], mode: RunnerMode): string[] =>
  mode === "all-in-one" ? [] : [...files];
