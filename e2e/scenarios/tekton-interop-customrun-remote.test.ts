// A remote Wait custom task under Tekton's own controller (v1.15.1): the pipeline task's taskRef
// names Wait's apiVersion and kind plus `resolver: git` and its params. Tekton does not resolve a
// custom task's ref: it copies it into the CustomRun's customRef. Quarry's run-controller creates
// the ResolutionRequest (owned by the CustomRun), Quarry's git resolver answers it, and the
// wait-task runs the definition's default duration; Tekton marks the PipelineRun Succeeded with
// the `waited` result. Tekton's structural CustomRun CRD prunes status.childReferences and
// status.provenance, so the request and its refSource reach the CustomRun only as the
// run-controller's status.annotations (docs/tekton-drop-in.md, "CustomRuns").
import assert from "node:assert/strict";
import { test } from "node:test";
import type { RefSource, ResolutionRequest } from "@quarry/api";
import {
  ANNOTATION_RUN_REF_SOURCE,
  ANNOTATION_RUN_REQUEST,
  waitRemoteRef,
  waitTaskYaml,
} from "@quarry/harness/run-ref-scenario";
import { runSucceeded } from "@quarry/harness/runs";
import { getRequest, succeeded } from "@quarry/harness/scenario";
import { createRun, pipelineRuns, succeededOf, useTektonCluster } from "@quarry/harness/tekton";
import { customRunFor, pipelineRunDone } from "@quarry/harness/tekton-customrun";

const cluster = useTektonCluster("tekton-customrun-remote", {
  gitFiles: { "tasks/wait.yaml": waitTaskYaml("wait", "1s") },
  services: {
    "lifecycle-controller": {},
    "git-resolver": {},
    "run-controller": { QUARRY_RUN_FLAVOURS: "CustomRun" },
    "wait-task": { QUARRY_RUN_FLAVOURS: "CustomRun" },
  },
});

test("a Wait taskRef with resolver git: Quarry resolves the CustomRun's customRef and runs it, Tekton succeeds", async () => {
  const t = cluster();
  const ref = waitRemoteRef("git", { url: t.gitUrl, revision: "main", pathInRepo: "tasks/wait.yaml" });
  await createRun(t, pipelineRuns, "remote", {
    pipelineSpec: {
      tasks: [{ name: "wait", taskRef: ref }],
      results: [{ name: "waited", type: "string", value: "$(tasks.wait.results.waited)" }],
    },
  });
  const done = await pipelineRunDone(t, "remote");
  const c = succeededOf(done)!;
  assert.equal(c.status, "True", `${c.reason}: ${c.message}`);
  assert.deepEqual(done.status?.results, [{ name: "waited", value: "1s" }], "the definition's default");

  const run = await customRunFor(t, "remote", "wait");
  // Tekton passes the ref through as written
  assert.deepEqual(run.spec.customRef, ref);
  const rc = runSucceeded(run)!;
  assert.equal(rc.reason, "DurationElapsed", rc.message);
  const requestName = run.status?.annotations?.[ANNOTATION_RUN_REQUEST];
  assert.ok(requestName, `the request is recorded: ${JSON.stringify(run.status)}`);
  const rr: ResolutionRequest = await getRequest(t.scn.admin, t.scn.namespace, requestName);
  assert.equal(succeeded(rr)?.status, "True");
  assert.equal(rr.metadata.ownerReferences?.[0]?.uid, run.metadata.uid, "owned by the CustomRun");
  assert.deepEqual(rr.spec.params, ref.params);
  const refSource = JSON.parse(run.status?.annotations?.[ANNOTATION_RUN_REF_SOURCE] ?? "{}") as RefSource;
  assert.deepEqual(refSource, {
    uri: `git+${t.gitUrl}`,
    digest: { sha1: t.gitCommit },
    entryPoint: "tasks/wait.yaml",
  });
  // Tekton's CRD has no such status fields: the apiserver drops what Quarry writes there
  assert.equal(run.status?.childReferences, undefined);
  assert.equal(run.status?.provenance, undefined);
  // and nobody keeps writing them back: the CustomRun settles
  await new Promise((r) => setTimeout(r, 3000));
  const later = await customRunFor(t, "remote", "wait");
  assert.equal(later.metadata.resourceVersion, run.metadata.resourceVersion, "no writes after completion");
});
