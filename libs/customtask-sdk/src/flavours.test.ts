import assert from "node:assert/strict";
import { test } from "node:test";
import { type Discover, runFlavours } from "./flavours.ts";

const served =
  (doc: Record<string, string[]>): Discover =>
  async (gv) =>
    doc[gv] ?? [];

test("auto, or unset: the flavours whose resource the apiserver serves", async () => {
  const both = served({
    "tekton.dev/v1alpha1": ["runs", "runs/status"],
    "tekton.dev/v1beta1": ["customruns"],
  });
  assert.deepEqual(await runFlavours("auto", both), ["Run", "CustomRun"]);
  assert.deepEqual(await runFlavours(undefined, both), ["Run", "CustomRun"]);
  assert.deepEqual(await runFlavours(" ", both), ["Run", "CustomRun"]);
  // Tekton Pipelines >= v0.47: v1alpha1 still serves other kinds, but no runs
  const tekton = served({
    "tekton.dev/v1alpha1": ["verificationpolicies"],
    "tekton.dev/v1beta1": ["customruns", "tasks"],
  });
  assert.deepEqual(await runFlavours("auto", tekton), ["CustomRun"]);
  assert.deepEqual(await runFlavours("auto", served({})), []);
});

test("an explicit list is taken as written, without discovery; an unknown flavour throws", async () => {
  const never: Discover = async () => assert.fail("no discovery for an explicit list");
  assert.deepEqual(await runFlavours("CustomRun", never), ["CustomRun"]);
  assert.deepEqual(await runFlavours("Run, CustomRun", never), ["Run", "CustomRun"]);
  await assert.rejects(
    runFlavours("PipelineRun", never),
    /QUARRY_RUN_FLAVOURS: unknown flavour "PipelineRun"/,
  );
});
