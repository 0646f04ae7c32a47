// The run-controller's identity holds exactly its shipped RBAC, proved with
// real API calls: it writes run status (both flavours) and creates requests,
// and is denied Secrets, Pods, request status and run specs.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type AnyRun, type RunFlavour, resolutionRequests } from "@quarry/api";
import { kinds } from "@quarry/devcluster/kinds";
import { waitUntil } from "@quarry/devcluster/wait";
import { createRun, FLAVOURS, getRun, resourceOf, runObject, WAIT_REF } from "@quarry/harness/runs";
import { createRequest, getRequest, newRequest, newScenario, type Scenario } from "@quarry/harness/scenario";
import { isApiError, type KubeClient, type ResourceType } from "@quarry/kube";

const pods: ResourceType = { group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true };
const GIT = { "resolution.tekton.dev/type": "git" };

let scn: Scenario;
let client: KubeClient;
const runName = (flavour: RunFlavour) => `rbac-${flavour.toLowerCase()}`;

before(async () => {
  scn = await newScenario("rc-rbac");
  client = (await scn.identity("run-controller")).client;
  // the authorizer's RBAC cache lags the bindings just made by a moment
  await waitUntil("run-controller's bindings in effect", async () => {
    await client.list(resourceOf("CustomRun"), scn.namespace);
    return true;
  });
  for (const flavour of FLAVOURS)
    await createRun(scn.admin, runObject(flavour, scn.namespace, { name: runName(flavour), ref: WAIT_REF }));
  // a request someone else (a resolver's client) made, for the status write below
  await createRequest(scn.admin, newRequest(scn.namespace, "theirs", GIT, { url: "https://x" }));
});
after(() => scn.cleanup());

async function denied(what: string, fn: () => Promise<unknown>) {
  await assert.rejects(fn, (err) => isApiError(err, 403), `${what} should be forbidden`);
}

for (const flavour of FLAVOURS) {
  test(`may patch ${flavour} status (/status subresource)`, async () => {
    const name = runName(flavour);
    const patched = await client.mergePatch<AnyRun>(
      resourceOf(flavour),
      scn.namespace,
      name,
      { status: { annotations: { "quarry.dev/e2e": "rbac" } } },
      "status",
    );
    assert.equal(patched.status?.annotations?.["quarry.dev/e2e"], "rbac");
    // the write reached the server, not just the response
    const stored = await getRun(scn.admin, flavour, scn.namespace, name);
    assert.equal(stored.status?.annotations?.["quarry.dev/e2e"], "rbac");
    // it reads runs to reconcile them
    await client.get(resourceOf(flavour), scn.namespace, name);
    await client.list(resourceOf(flavour), undefined);
  });

  test(`may not update a ${flavour} (main resource, spec)`, async () => {
    const run = await getRun(client, flavour, scn.namespace, runName(flavour));
    await denied("update", () =>
      client.replace(resourceOf(flavour), { ...run, spec: { ...run.spec, timeout: "5m" } }),
    );
    await denied("merge patch spec", () =>
      client.mergePatch(resourceOf(flavour), scn.namespace, runName(flavour), { spec: { timeout: "5m" } }),
    );
    const stored = await getRun(scn.admin, flavour, scn.namespace, runName(flavour));
    assert.equal(stored.spec.timeout, undefined);
  });
}

test("may create a ResolutionRequest (and read it), cleaned up by the admin", async () => {
  const created = await createRequest(
    client,
    newRequest(scn.namespace, "rc-made", GIT, { url: "https://y" }),
  );
  try {
    assert.equal(created.metadata.name, "rc-made");
    assert.equal((await getRequest(client, scn.namespace, "rc-made")).metadata.uid, created.metadata.uid);
  } finally {
    await scn.admin.delete(resolutionRequests, scn.namespace, "rc-made");
  }
});

test("may not patch a ResolutionRequest's status (resolving is the resolvers' job)", async () => {
  const data = Buffer.from("kind: Task").toString("base64");
  await denied("patch resolutionrequests/status", () =>
    client.mergePatch(resolutionRequests, scn.namespace, "theirs", { status: { data } }, "status"),
  );
  assert.equal((await getRequest(scn.admin, scn.namespace, "theirs")).status?.data, undefined);
});

test("may not get or list Secrets", async () => {
  await denied("list secrets", () => client.list(kinds.Secret!, scn.namespace));
  await denied("list secrets cluster-wide", () => client.list(kinds.Secret!, undefined));
  await denied("get secret", () => client.get(kinds.Secret!, scn.namespace, "anything"));
});

test("may not create or get Pods", async () => {
  const pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "rc-pod", namespace: scn.namespace },
    spec: { containers: [{ name: "c", image: "busybox" }] },
  };
  await denied("create pod", () => client.create(pods, pod));
  await denied("get pod", () => client.get(pods, scn.namespace, "rc-pod"));
  // nothing was created behind the 403
  await assert.rejects(
    () => scn.admin.get(pods, scn.namespace, "rc-pod"),
    (err) => isApiError(err, 404),
  );
});
