// A resolution Quarry fails surfaces on Tekton Pipelines' runs with Quarry's message: a TaskRun
// whose git path does not exist and one whose bundle lacks the named Task end with Tekton's
// reason TaskRunResolutionFailed, a PipelineRun naming a Pipeline the cluster lacks with
// CouldntGetPipeline; each run's message carries the message of Quarry's failed request
// (ResolutionFailed, quarry.dev/reason NotFound).
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { tknBundlePush } from "@quarry/devcluster/registry";
import { TASK_YAML } from "@quarry/harness/bundle-scenario";
import { succeeded } from "@quarry/harness/scenario";
import {
  createRun,
  params,
  pipelineRuns,
  requestOwnedBy,
  type TektonCluster,
  taskRuns,
  useTektonCluster,
  waitRun,
} from "@quarry/harness/tekton";
import { recordTransitions, type TransitionRecorder } from "@quarry/harness/transitions";
import type { ResourceType } from "@quarry/kube";

const cluster = useTektonCluster("tekton-fail", {
  gitFiles: { "tasks/build.yaml": TASK_YAML },
  setup: async ({ scn, registry }) => {
    await tknBundlePush(registry.ref("team/defs:v1"), [TASK_YAML]);
    transitions = recordTransitions(scn.admin, scn.namespace);
  },
});
let transitions: TransitionRecorder | undefined;
after(() => transitions?.stop());

interface Case {
  name: string;
  rt: ResourceType;
  spec: (t: TektonCluster) => Record<string, unknown>;
  /** Tekton's reason on the run. */
  runReason: string;
  /** What Quarry's message names. */
  names: RegExp;
}

const CASES: Case[] = [
  {
    name: "git-missing-path",
    rt: taskRuns,
    spec: (t) => ({
      taskRef: {
        resolver: "git",
        params: params({ url: t.gitUrl, revision: "main", pathInRepo: "tasks/missing.yaml" }),
      },
    }),
    runReason: "TaskRunResolutionFailed",
    names: /tasks\/missing\.yaml/,
  },
  {
    name: "bundle-missing-name",
    rt: taskRuns,
    spec: (t) => ({
      taskRef: {
        resolver: "bundles",
        params: params({ bundle: t.registry.ref("team/defs:v1"), name: "deploy", kind: "task" }),
      },
    }),
    runReason: "TaskRunResolutionFailed",
    names: /deploy/,
  },
  {
    name: "cluster-missing-pipeline",
    rt: pipelineRuns,
    spec: () => ({
      pipelineRef: { resolver: "cluster", params: params({ kind: "pipeline", name: "nope" }) },
    }),
    runReason: "CouldntGetPipeline",
    names: /nope/,
  },
];

test("Quarry's failed resolutions end Tekton's runs with Tekton's reasons and Quarry's messages", async () => {
  const t = cluster();
  await Promise.all(CASES.map((c) => createRun(t, c.rt, c.name, c.spec(t))));
  for (const c of CASES) {
    const run = await waitRun(
      t,
      c.rt,
      c.name,
      "failed",
      (r) => r.status?.conditions?.some((x) => x.type === "Succeeded" && x.status === "False") ?? false,
    );
    const rr = await requestOwnedBy(t, run);
    const cond = succeeded(rr);
    const seen = transitions?.transitions.get(rr.metadata.name!);
    assert.equal(cond?.status, "False", `${c.name}: Quarry failed the request`);
    assert.equal(cond?.reason, "ResolutionFailed", `${c.name}: ${JSON.stringify(cond)}; seen ${seen}`);
    assert.equal(seen?.at(-1), "False/ResolutionFailed", `${c.name}: one terminal state, seen ${seen}`);
    assert.equal(seen?.filter((x) => x.startsWith("False")).length, 1, `${c.name}: seen ${seen}`);
    assert.equal(rr.status?.annotations?.["quarry.dev/reason"], "NotFound", c.name);
    assert.match(cond?.message ?? "", c.names, `${c.name}: Quarry's message names what is missing`);
    const runCond = run.status?.conditions?.find((x) => x.type === "Succeeded");
    assert.equal(runCond?.reason, c.runReason, `${c.name}: ${runCond?.message}`);
    assert.ok(
      runCond?.message?.includes(cond?.message ?? "<none>"),
      `${c.name}: the run's message carries Quarry's\n  run: ${runCond?.message}\n  Quarry: ${cond?.message}`,
    );
    assert.equal(run.status?.provenance?.refSource, undefined, `${c.name}: no provenance for a failure`);
  }
});
