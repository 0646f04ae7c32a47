// The lifecycle controller's identity holds exactly the shipped RBAC: it can
// do its job and is denied what it must not do.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { resolutionRequests } from "@quarry/api";
import { kinds } from "@quarry/devcluster/kinds";
import { createRequest, newRequest, newScenario, type Scenario } from "@quarry/harness/scenario";
import { configMaps, isApiError, type KubeClient } from "@quarry/kube";

let scn: Scenario;
let client: KubeClient;
before(async () => {
  scn = await newScenario("lc-rbac");
  client = (await scn.identity("lifecycle-controller")).client;
  await createRequest(scn.admin, newRequest(scn.namespace, "r1", { "resolution.tekton.dev/type": "git" }));
});
after(() => scn.cleanup());

async function denied(what: string, fn: () => Promise<unknown>) {
  await assert.rejects(fn, (err) => isApiError(err, 403), `${what} should be forbidden`);
}

test("may list requests and patch their status conditions", async () => {
  const list = await client.list(resolutionRequests, scn.namespace);
  assert.equal(list.items.length, 1);
  await client.mergePatch(
    resolutionRequests,
    scn.namespace,
    "r1",
    { status: { conditions: [{ type: "Succeeded", status: "Unknown", reason: "ResolutionInProgress" }] } },
    "status",
  );
});

test("may not read Secrets", async () => {
  await denied("list secrets", () => client.list(kinds.Secret!, scn.namespace));
  await denied("get secret", () => client.get(kinds.Secret!, scn.namespace, "anything"));
});

test("may not write request data", async () => {
  const data = Buffer.from("kind: Task").toString("base64");
  await assert.rejects(
    () => client.mergePatch(resolutionRequests, scn.namespace, "r1", { status: { data } }, "status"),
    (err) => isApiError(err) && /conditions only/.test(err.message),
  );
});

test("may not create requests, delete one that is not completed, nor change their spec", async () => {
  await denied("create", () =>
    client.create(
      resolutionRequests,
      newRequest(scn.namespace, "r2", { "resolution.tekton.dev/type": "git" }),
    ),
  );
  await denied("delete", () => client.delete(resolutionRequests, scn.namespace, "r1"));
  await assert.rejects(
    () =>
      client.mergePatch(resolutionRequests, scn.namespace, "r1", {
        spec: { params: [{ name: "url", value: "x" }] },
      }),
    (err) => isApiError(err) && /may not change a ResolutionRequest's spec/.test(err.message),
  );
});

test("may read only its own ConfigMap", async () => {
  await denied("other configmap", () => client.get(configMaps, scn.namespace, "kube-root-ca.crt"));
  await denied("configmaps elsewhere", () => client.list(configMaps, "default"));
});
