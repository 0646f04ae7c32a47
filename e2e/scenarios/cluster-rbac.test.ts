// The cluster resolver's identity can read Tekton objects and write request
// status, and nothing it does not need: no Secrets, no request creation.
import assert from "node:assert/strict";
import { test } from "node:test";
import { resolutionRequests } from "@quarry/api";
import { kinds } from "@quarry/devcluster/kinds";
import { newRequest, useScenario } from "@quarry/harness/scenario";
import { configMaps, isApiError } from "@quarry/kube";

const scenario = useScenario("cluster-rbac");
const as = async () => (await scenario().identity("cluster-resolver")).client;
const denied = (err: unknown) => isApiError(err, 403);

test("may list Tasks, Pipelines and StepActions cluster-wide", async () => {
  const client = await as();
  for (const k of [kinds.Task!, kinds.Pipeline!, kinds.StepAction!]) await client.list(k, undefined);
});

test("may not read Secrets anywhere", async () => {
  const client = await as();
  await assert.rejects(client.list(kinds.Secret!, scenario().namespace), denied);
  await assert.rejects(client.list(kinds.Secret!, undefined), denied);
});

test("may not create requests or read other ConfigMaps", async () => {
  const client = await as();
  const ns = scenario().namespace;
  await assert.rejects(
    client.create(resolutionRequests, newRequest(ns, "x", { "resolution.tekton.dev/type": "cluster" })),
    denied,
  );
  await assert.rejects(client.list(configMaps, ns), denied);
});
