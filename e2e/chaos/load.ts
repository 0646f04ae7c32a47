// The chaos suite's mixed load: git by branch and by commit SHA, bundles by tag
// and by digest, and cluster Tasks, in turn; created at a steady pace while the
// faults run, each create retried until the apiserver takes it (a create whose
// answer was lost to a fault comes back AlreadyExists on the retry: it counts).
import { setTimeout as sleep } from "node:timers/promises";
import type { ResolutionRequest } from "@quarry/api";
import { isApiError } from "@quarry/kube";
import { createRequest, newRequest } from "../harness/scenario.ts";
import { type ChaosWorld, clusterTask } from "./world.ts";

export const KINDS = ["git-branch", "git-sha", "bundle-tag", "bundle-digest", "cluster"] as const;
export type LoadKind = (typeof KINDS)[number];

export interface PlannedRequest {
  name: string;
  kind: LoadKind;
  request: ResolutionRequest;
}

const GIT_PATHS = ["task.yaml", "tasks/build/task.yaml", "pipelines/ci/pipeline.yaml"];
const LABEL = "resolution.tekton.dev/type";

/** Request i of the mix, named `<prefix>-<kind>-<i>`. */
export function planRequest(world: ChaosWorld, prefix: string, i: number): PlannedRequest {
  const kind = KINDS[i % KINDS.length]!;
  const name = `${prefix}-${kind}-${String(i).padStart(4, "0")}`;
  const ns = world.scn.namespace;
  const url = world.git.url(world.repo.name);
  const n = Math.floor(i / KINDS.length);
  const pathInRepo = GIT_PATHS[n % GIT_PATHS.length]!;
  let request: ResolutionRequest;
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
  }
  return { name, kind, request };
}

/** Creates the request, retrying through outages; AlreadyExists means an earlier try got through. */
export async function createWithRetry(
  world: ChaosWorld,
  rr: ResolutionRequest,
  deadline: number,
): Promise<void> {
  for (;;) {
    try {
      await createRequest(world.scn.admin, rr);
      return;
    } catch (err) {
      if (isApiError(err, 409)) return;
      // a refusal that is not about availability is the suite's own bug
      if (isApiError(err) && err.status >= 400 && err.status < 500 && err.status !== 429) throw err;
      if (Date.now() > deadline) throw err;
      await sleep(500);
    }
  }
}
