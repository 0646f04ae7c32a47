// The chaos suite's mixed load: requests (git by branch and by commit SHA,
// bundles by tag and by digest, cluster Tasks, http with and without a
// `digest`, hub from Artifact Hub and from Tekton Hub) and Wait runs (plain,
// by a git remote ref, timing out, cancelled mid-way), in turn, both flavours; created
// at a steady pace while the faults run, each create retried until the
// apiserver takes it (a create whose answer was lost to a fault comes back
// AlreadyExists on the retry: it counts).
import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { AnyRun, ResolutionRequest, RunFlavour } from "@quarry/api";
import { cancelRun, createRun, FLAVOURS, runObject, WAIT_REF } from "@quarry/harness/runs";
import { createRequest, newRequest } from "@quarry/harness/scenario";
import { isApiError } from "@quarry/kube";
import {
  CHAOS_PIPE,
  type ChaosWorld,
  clusterTask,
  HUB_TASK,
  HUB_VERSIONS,
  hubYaml,
  webBody,
  webPath,
} from "./world.ts";

export const REQUEST_KINDS = [
  "git-branch",
  "git-sha",
  "bundle-tag",
  "bundle-digest",
  "cluster",
  "http",
  "hub",
] as const;
export type RequestKind = (typeof REQUEST_KINDS)[number];
export const RUN_KINDS = ["wait", "wait-git-ref", "wait-timeout", "wait-cancel"] as const;
export type RunKind = (typeof RUN_KINDS)[number];
/** The cycle the load goes through: seven requests, then four runs (then a pipe, with a node). */
export const KINDS = [...REQUEST_KINDS, ...RUN_KINDS] as const;
export type LoadKind = (typeof KINDS)[number] | "pipe";

/** The world's cycle: KINDS, and a pipe request when pipe pods have a node to run on. */
export const kindsOf = (world: ChaosWorld): readonly LoadKind[] => (world.node ? [...KINDS, "pipe"] : KINDS);

export interface PlannedRequest {
  name: string;
  kind: RequestKind | "pipe";
  request: ResolutionRequest;
  /** The data a resolved request must carry, where the load knows it (http, hub). */
  data?: string;
}

export interface PlannedRun {
  name: string;
  kind: RunKind;
  flavour: RunFlavour;
  run: AnyRun;
  /** Cancelled (as a PipelineRun cancels it) this long after its create went through. */
  cancelAfterMs?: number;
}

export type PlannedItem = PlannedRequest | PlannedRun;
export const isRun = (p: PlannedItem): p is PlannedRun => "run" in p;

/** A Wait run's duration: short, so runs end within the quiet gap after their fault. */
export const WAIT_DURATION = "2s";
/** Long Waits: ended by their timeout or their cancel, long before the duration. */
const LONG_WAIT = "45s";
const RUN_TIMEOUT = "3s";
const CANCEL_AFTER_MS = 3_000;

/** The terminal outcomes a run of each kind may end with (status/reason); anything else is a finding. */
export function expectedRunOutcomes(kind: RunKind, flavour: RunFlavour): string[] {
  switch (kind) {
    case "wait":
      return ["True/DurationElapsed"];
    case "wait-git-ref":
      // the git server down for longer than the resolver's retries: the request fails, and so the run
      return ["True/DurationElapsed", "False/ResolutionFailed"];
    case "wait-timeout":
      return [`False/${flavour}TimedOut`];
    case "wait-cancel":
      return [`False/${flavour}Cancelled`];
  }
}

/**
 * The outcomes a request of each kind may end with (`Resolved` or its quarry.dev/reason); undefined:
 * any terminal one with a reason (a pipe request: its pod meets faults of its own).
 */
export function expectedRequestOutcomes(kind: RequestKind | "pipe"): string[] | undefined {
  switch (kind) {
    case "git-branch":
    case "git-sha":
    case "bundle-tag":
    case "bundle-digest":
      // the git server or the registry down for longer than the resolver's retries
      return ["Resolved", "SourceUnavailable"];
    case "cluster":
    case "http":
    case "hub":
      // sources the faults never take down
      return ["Resolved"];
    case "pipe":
      return undefined;
  }
}

const GIT_PATHS = ["task.yaml", "tasks/build/task.yaml", "pipelines/ci/pipeline.yaml"];
const LABEL = "resolution.tekton.dev/type";

/** Item i of the mix, named `<prefix>-<kind>-<i>` (runs: `-<flavour>` too). */
export function planItem(world: ChaosWorld, prefix: string, i: number): PlannedItem {
  const kinds = kindsOf(world);
  const kind = kinds[i % kinds.length]!;
  const n = Math.floor(i / kinds.length);
  if ((RUN_KINDS as readonly string[]).includes(kind)) return planRun(world, prefix, kind as RunKind, i, n);
  return planRequest(world, prefix, kind as RequestKind | "pipe", i, n);
}

function planRun(world: ChaosWorld, prefix: string, kind: RunKind, i: number, n: number): PlannedRun {
  const flavour = FLAVOURS[n % FLAVOURS.length]!;
  const name = `${prefix}-${kind}-${String(i).padStart(4, "0")}-${flavour.toLowerCase()}`;
  const ns = world.scn.namespace;
  const duration = (value: string) => [{ name: "duration", value }];
  switch (kind) {
    case "wait":
      return {
        name,
        kind,
        flavour,
        run: runObject(flavour, ns, { name, ref: WAIT_REF, params: duration(WAIT_DURATION) }),
      };
    case "wait-git-ref": {
      // the Wait's definition read through a ResolutionRequest the run-controller creates (by
      // branch, so the git server's outage fails some; the run's duration param wins over it)
      const params = { url: world.git.url(world.repo.name), revision: "main", pathInRepo: "task.yaml" };
      const ref = {
        ...WAIT_REF,
        resolver: "git",
        params: Object.entries(params).map(([k, value]) => ({ name: k, value })),
      };
      return {
        name,
        kind,
        flavour,
        run: runObject(flavour, ns, { name, ref, params: duration(WAIT_DURATION) }),
      };
    }
    case "wait-timeout":
      return {
        name,
        kind,
        flavour,
        run: runObject(flavour, ns, {
          name,
          ref: WAIT_REF,
          params: duration(LONG_WAIT),
          timeout: RUN_TIMEOUT,
        }),
      };
    case "wait-cancel":
      return {
        name,
        kind,
        flavour,
        run: runObject(flavour, ns, { name, ref: WAIT_REF, params: duration(LONG_WAIT) }),
        cancelAfterMs: CANCEL_AFTER_MS,
      };
  }
}

function planRequest(
  world: ChaosWorld,
  prefix: string,
  kind: RequestKind | "pipe",
  i: number,
  n: number,
): PlannedRequest {
  const name = `${prefix}-${kind}-${String(i).padStart(4, "0")}`;
  const ns = world.scn.namespace;
  const url = world.git.url(world.repo.name);
  const pathInRepo = GIT_PATHS[n % GIT_PATHS.length]!;
  let request: ResolutionRequest;
  let data: string | undefined;
  switch (kind) {
    case "git-branch":
      request = newRequest(
        ns,
        name,
        { [LABEL]: "git" },
        {
          url,
          revision: ["main", "feature", "release/1.0"][n % 3]!,
          pathInRepo,
        },
      );
      break;
    case "git-sha": {
      const { first, main, feature } = world.repo;
      request = newRequest(
        ns,
        name,
        { [LABEL]: "git" },
        { url, revision: [first, main, feature][n % 3]!, pathInRepo },
      );
      break;
    }
    case "bundle-tag":
      request = newRequest(
        ns,
        name,
        { [LABEL]: "bundles" },
        { bundle: world.bundleTag, name: "build", kind: "task" },
      );
      break;
    case "bundle-digest":
      request = newRequest(
        ns,
        name,
        { [LABEL]: "bundles" },
        {
          bundle: world.bundleDigest,
          name: "build",
          kind: "task",
        },
      );
      break;
    case "cluster":
      request = newRequest(ns, name, { [LABEL]: "cluster" }, { kind: "task", name: clusterTask(n) });
      break;
    case "http": {
      // every other one pinned by `digest` (cached after its first fetch: auto mode)
      data = webBody(n);
      const params: Record<string, string> = { url: `${world.web.base}${webPath(n)}` };
      if (n % 2 === 1) params.digest = `sha256:${createHash("sha256").update(data).digest("hex")}`;
      request = newRequest(ns, name, { [LABEL]: "http" }, params);
      break;
    }
    case "hub": {
      // Artifact Hub and Tekton Hub in turn, each version in turn (n / 2: both hubs see each)
      const hub = n % 2 === 0 ? "artifact" : "tekton";
      const version = HUB_VERSIONS[Math.floor(n / 2) % HUB_VERSIONS.length]!;
      data = hubYaml(hub, version);
      request = newRequest(ns, name, { [LABEL]: "hub" }, { type: hub, name: HUB_TASK, version });
      break;
    }
    case "pipe":
      // one pod on the node per request; its output comes back through exec as a ConfigMap
      request = newRequest(ns, name, { [LABEL]: "pipe" }, { pipe: CHAOS_PIPE, n: String(i) });
      break;
  }
  return { name, kind, request, data };
}

/** Calls `call` until the apiserver takes it, through outages; `done(err)` says an error means it got through. */
async function withRetry(
  call: () => Promise<unknown>,
  deadline: number,
  done: (err: unknown) => boolean = () => false,
): Promise<void> {
  for (;;) {
    try {
      await call();
      return;
    } catch (err) {
      if (done(err)) return;
      // a refusal that is not about availability is the suite's own bug
      if (isApiError(err) && err.status >= 400 && err.status < 500 && err.status !== 429) throw err;
      if (Date.now() > deadline) throw err;
      await sleep(500);
    }
  }
}

/** Creates the request, retrying through outages; AlreadyExists means an earlier try got through. */
export function createWithRetry(world: ChaosWorld, rr: ResolutionRequest, deadline: number): Promise<void> {
  return withRetry(
    () => createRequest(world.scn.admin, rr),
    deadline,
    (err) => isApiError(err, 409),
  );
}

/** Creates the item (retrying as createWithRetry does); a run to cancel is then cancelled, retried alike. */
export async function launch(world: ChaosWorld, item: PlannedItem, deadline: number): Promise<void> {
  if (!isRun(item)) return createWithRetry(world, item.request, deadline);
  const { admin, namespace } = world.scn;
  await withRetry(
    () => createRun(admin, item.run),
    deadline,
    (err) => isApiError(err, 409),
  );
  if (item.cancelAfterMs === undefined) return;
  await sleep(item.cancelAfterMs);
  await withRetry(() => cancelRun(admin, item.flavour, namespace, item.name), deadline + item.cancelAfterMs);
}
