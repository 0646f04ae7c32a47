// The git resolver's identity: requests and their status, nothing of the
// cluster's Tekton objects, and no Secrets unless a namespace grants `get`.
import assert from "node:assert/strict";
import { test } from "node:test";
import { applyObject } from "@quarry/devcluster/apply";
import { kinds } from "@quarry/devcluster/kinds";
import { grantTokenAccess } from "@quarry/harness/git-scenario";
import { useScenario } from "@quarry/harness/scenario";
import { isApiError } from "@quarry/kube";

const scenario = useScenario("git-rbac");
const denied = (err: unknown) => isApiError(err, 403);

test("may not read Tasks or Pipelines", async () => {
  const client = (await scenario().identity("git-resolver")).client;
  await assert.rejects(client.list(kinds.Task!, undefined), denied);
  await assert.rejects(client.list(kinds.Pipeline!, scenario().namespace), denied);
});

test("Secrets: none by default; with a namespace's grant, get there only", async () => {
  const scn = scenario();
  const client = (await scn.identity("git-resolver")).client;
  await applyObject(scn.admin, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "tok", namespace: scn.namespace },
    stringData: { token: "x" },
  });
  const other = await scn.extraNamespace("git-rbac-other");
  await applyObject(scn.admin, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "tok", namespace: other },
    stringData: { token: "y" },
  });
  await assert.rejects(client.get(kinds.Secret!, scn.namespace, "tok"), denied);
  await grantTokenAccess(scn);
  await client.get(kinds.Secret!, scn.namespace, "tok");
  await assert.rejects(client.list(kinds.Secret!, scn.namespace), denied, "get only, never list");
  await assert.rejects(
    client.get(kinds.Secret!, other, "tok"),
    denied,
    "not in a namespace that did not grant it",
  );
});
