// Completed requests do not pile up: with completed-request-ttl set, the
// lifecycle controller deletes a resolved request once the TTL passed, never
// one still in progress, and one owned by a run only after that run is done
// (it may not have read the request before). The deletion goes through the
// shipped RBAC and the quarry-lifecycle-controller-deletes admission policy.
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { type CustomRun, customRuns, type ResolutionRequest, resolutionRequests } from "@quarry/api";
import {
  createRequest,
  initialised,
  newRequest,
  type Scenario,
  succeeded,
  useScenario,
  waitForRequest,
} from "@quarry/harness/scenario";
import { isApiError } from "@quarry/kube";

const TTL_S = 2;
const scenario = useScenario("lc-ttl", {
  lifecycleConfig: { "completed-request-ttl": `${TTL_S}s` },
  start: ["lifecycle-controller"],
});
const GIT = { "resolution.tekton.dev/type": "git" };
const DATA = Buffer.from("apiVersion: tekton.dev/v1\nkind: Task\n").toString("base64");

/** The test plays the resolver: data in, and the lifecycle controller marks it Succeeded. */
async function complete(scn: Scenario, name: string): Promise<number> {
  await waitForRequest(scn, name, initialised);
  await scn.admin.mergePatch(resolutionRequests, scn.namespace, name, { status: { data: DATA } }, "status");
  const rr = await waitForRequest(scn, name, (r) => succeeded(r)?.status === "True");
  return Date.parse(succeeded(rr)?.lastTransitionTime ?? "");
}

async function gone(scn: Scenario, name: string, withinMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    try {
      await scn.admin.get<ResolutionRequest>(resolutionRequests, scn.namespace, name);
    } catch (err) {
      if (isApiError(err, 404)) return Date.now() - started;
      throw err;
    }
    assert.ok(Date.now() - started < withinMs, `${name} still there after ${withinMs} ms`);
    await sleep(200);
  }
}

async function exists(scn: Scenario, name: string): Promise<boolean> {
  try {
    await scn.admin.get<ResolutionRequest>(resolutionRequests, scn.namespace, name);
    return true;
  } catch (err) {
    if (isApiError(err, 404)) return false;
    throw err;
  }
}

test("a resolved request is deleted once the ttl passed; one in progress is not", async (t) => {
  const scn = scenario();
  await createRequest(scn.admin, newRequest(scn.namespace, "pending", GIT));
  await createRequest(scn.admin, newRequest(scn.namespace, "done", GIT));
  const completedAt = await complete(scn, "done");
  await gone(scn, "done", 15_000);
  // the condition's time has whole seconds: the deletion is at least the ttl after it
  const ms = Date.now() - completedAt;
  t.diagnostic(`gone ${ms} ms after its Succeeded condition's time (ttl ${TTL_S}s)`);
  assert.ok(ms >= TTL_S * 1000, `deleted after ${ms} ms, before its ttl`);
  assert.ok(await exists(scn, "pending"), "a request in progress was deleted");
});

test("owned by a CustomRun: kept while the run runs, deleted once it is done", async () => {
  const scn = scenario();
  const run: CustomRun = await scn.admin.create(customRuns, {
    apiVersion: "tekton.dev/v1beta1",
    kind: "CustomRun",
    metadata: { name: "owner", namespace: scn.namespace },
    spec: { customRef: { apiVersion: "example.dev/v1", kind: "Example" } },
  } as CustomRun);
  const rr = newRequest(scn.namespace, "owned", GIT);
  rr.metadata.ownerReferences = [
    {
      apiVersion: "tekton.dev/v1beta1",
      kind: "CustomRun",
      name: "owner",
      uid: run.metadata.uid ?? "",
      controller: true,
    },
  ];
  await createRequest(scn.admin, rr);
  await complete(scn, "owned");
  // twice the ttl, and the owner rechecked at the ttl: still there
  await sleep(TTL_S * 2000 + 1000);
  assert.ok(await exists(scn, "owned"), "deleted while its owner was still running");
  await scn.admin.mergePatch(
    customRuns,
    scn.namespace,
    "owner",
    {
      status: {
        conditions: [
          {
            type: "Succeeded",
            status: "True",
            reason: "Done",
            lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
          },
        ],
      },
    },
    "status",
  );
  await gone(scn, "owned", 15_000);
});

test("the lifecycle controller's identity may not delete a request that is not completed", async () => {
  const scn = scenario();
  const { client } = await scn.identity("lifecycle-controller");
  await createRequest(scn.admin, newRequest(scn.namespace, "not-done", GIT));
  await assert.rejects(
    () => client.delete(resolutionRequests, scn.namespace, "not-done"),
    (err) => isApiError(err) && /deletes only completed ResolutionRequests/.test(err.message),
  );
  assert.ok(await exists(scn, "not-done"));
});
