// Tekton Pipelines' own controller (v1.15.1) running a PipelineRun whose tasks come from
// `taskRef.resolver: hub`, answered by Quarry's hub resolver from a hub protocol fixture on
// loopback named by the Deployment's env (ARTIFACT_HUB_API with a trailing `/`, TEKTON_HUB_API).
// Tekton's resolvers Deployment is at zero replicas, as an operator leaves it for Quarry: the
// harness never starts Tekton's `resolvers` process, and each request's status is shown, from
// the apiserver's audit log, to be written by Quarry's processes only.
//
// What Tekton's hub resolver would have answered is computed as it computes it
// (pkg/resolution/resolver/hub): a version constraint picks the highest listed version matching
// (Artifact Hub's pre-releases skipped) printed by go-version with three segments; Artifact Hub
// is then asked for major.minor.patch and Tekton Hub for major.minor; data is the YAML the hub
// returned, refSource {uri: the API URL fetched, digest: {sha256: hex of the YAML}}.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, test } from "node:test";
import { type ResolutionRequest, resolutionRequests } from "@quarry/api";
import { type HubFixture, startHubFixture } from "@quarry/harness/hub-fixture";
import { dataOf, succeeded } from "@quarry/harness/scenario";
import {
  assertAnsweredByQuarry,
  assertContains,
  createRun,
  params,
  pipelineRuns,
  type TektonCluster,
  taskRuns,
  useTektonCluster,
  waitRun,
} from "@quarry/harness/tekton";
import yaml from "js-yaml";

/** A valid Task (Tekton validates what it resolves) whose script says which version it is. */
const hubTask = (name: string, version: string) => `apiVersion: tekton.dev/v1
kind: Task
metadata:
  name: ${name}
spec:
  steps:
    - name: run
      image: busybox
      script: echo ${name} ${version}
`;
const ARTIFACT_VERSIONS = ["0.1.0", "0.2.0", "0.2.1", "0.2.2-rc.1", "0.3.0"];
const TEKTON_VERSIONS = ["0.1", "0.3", "0.4"];

let hub: HubFixture | undefined;
const cluster = useTektonCluster("tekton-hub", {
  gitFiles: { "README.md": "unused\n" },
  auditLog: true,
  setup: async () => {
    hub = await startHubFixture();
    hub.add({
      hub: "artifact",
      catalog: "tekton-catalog-tasks",
      kind: "task",
      name: "git-clone",
      versions: ARTIFACT_VERSIONS.map((v) => ({
        version: v,
        prerelease: v.includes("-"),
        yaml: hubTask("git-clone", v),
      })),
    });
    hub.add({
      hub: "tekton",
      catalog: "Tekton",
      kind: "task",
      name: "golang-build",
      versions: TEKTON_VERSIONS.map((v) => ({ version: v, yaml: hubTask("golang-build", v) })),
    });
  },
  services: () => ({
    "lifecycle-controller": {},
    // as Tekton's resolvers Deployment takes them; Tekton drops the trailing "/"
    "hub-resolver": { ARTIFACT_HUB_API: `${hub?.base}/`, TEKTON_HUB_API: `${hub?.base}` },
  }),
});
after(() => hub?.close());

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

interface HubCase {
  /** The pipeline task's name. */
  task: string;
  params: Record<string, string>;
  /** Tekton's answer: the API path it fetches and the YAML there. */
  path: string;
  yaml: string;
}

const CASES: HubCase[] = [
  {
    // 0.2.2-rc.1 matches but is a pre-release; 0.3.0 does not match
    task: "clone",
    params: { type: "artifact", name: "git-clone", version: ">= 0.2.0, < 0.3.0" },
    path: "/api/v1/packages/tekton-task/tekton-catalog-tasks/git-clone/0.2.1",
    yaml: hubTask("git-clone", "0.2.1"),
  },
  {
    // a full version asked of Tekton Hub as major.minor
    task: "build",
    params: { type: "tekton", name: "golang-build", version: "0.3.0" },
    path: "/v1/resource/Tekton/task/golang-build/0.3/yaml",
    yaml: hubTask("golang-build", "0.3"),
  },
  {
    // go-version prints the match as 0.4.0, which Tekton Hub is asked for as 0.4
    task: "build-latest",
    params: { type: "tekton", name: "golang-build", version: "~> 0.3" },
    path: "/v1/resource/Tekton/task/golang-build/0.4/yaml",
    yaml: hubTask("golang-build", "0.4"),
  },
];

const tektonAnswer = (c: HubCase) => ({
  type: "hub",
  service: "hub-resolver",
  data: c.yaml,
  refSource: { uri: `${hub?.base}${c.path}`, digest: { sha256: sha256(c.yaml) } },
});

test("a PipelineRun's tasks from resolver hub (artifact with a constraint, tekton) are what Tekton's resolver would give", async () => {
  const t: TektonCluster = cluster();
  const pr = await createRun(t, pipelineRuns, "hub-pipeline", {
    pipelineSpec: {
      tasks: CASES.map((c) => ({ name: c.task, taskRef: { resolver: "hub", params: params(c.params) } })),
    },
  });
  // Tekton resolves each pipeline task's ref for the PipelineRun (the requests are its), then
  // each TaskRun, created with the same taskRef, resolves it again under the same request name.
  const run = await waitRun(
    t,
    pipelineRuns,
    "hub-pipeline",
    "a TaskRun for every pipeline task",
    (x) => (x.status?.childReferences?.length ?? 0) === CASES.length,
  );
  const ownedByRun = (
    await t.scn.admin.list<ResolutionRequest>(resolutionRequests, t.scn.namespace)
  ).items.filter((rr) => rr.metadata.ownerReferences?.some((o) => o.uid === pr.metadata.uid));
  assert.equal(ownedByRun.length, CASES.length, "one request per pipeline task for the PipelineRun");
  for (const c of CASES) {
    const want = tektonAnswer(c);
    const rr = ownedByRun.find((x) => sameParams(x, c.params));
    assert.ok(rr, `the PipelineRun's request for ${c.task}`);
    assert.equal(rr.metadata.labels?.["resolution.tekton.dev/type"], "hub", c.task);
    assert.equal(succeeded(rr)?.status, "True", `${c.task}: ${JSON.stringify(succeeded(rr))}`);
    assert.equal(dataOf(rr), want.data, `${c.task}: data`);
    assert.deepEqual(rr.status?.refSource, want.refSource, `${c.task}: refSource`);
    await assertAnsweredByQuarry(t, rr.metadata.name!, "hub-resolver");
    const child = run.status?.childReferences?.find((r) => r.pipelineTaskName === c.task);
    assert.ok(child, `a TaskRun for ${c.task}`);
    const tr = await waitRun(t, taskRuns, child.name, "status.taskSpec stored", (x) => !!x.status?.taskSpec);
    const spec = (yaml.load(want.data) as { spec: Record<string, unknown> }).spec;
    // the TaskRun keeps the taskRef; its request's deterministic name (namespace, TaskRun name,
    // params) is the one the PipelineRun's request has, so it reads that answer again
    assert.equal((tr.spec.taskRef as { resolver?: string } | undefined)?.resolver, "hub", child.name);
    assertContains(tr.status?.taskSpec, spec, `${child.name}.status.taskSpec`);
    assert.deepEqual(tr.status?.provenance?.refSource, want.refSource, `${child.name}: provenance`);
  }
  // each resolution listed the versions only for a constraint, then fetched the one path
  for (const c of CASES) assert.ok(hub?.requests.includes(c.path), `${c.path} fetched`);
});

function sameParams(rr: ResolutionRequest, want: Record<string, string>): boolean {
  const got = Object.fromEntries((rr.spec.params ?? []).map((p) => [p.name, p.value]));
  return (
    Object.entries(want).every(([k, v]) => got[k] === v) &&
    Object.keys(got).length === Object.keys(want).length
  );
}
