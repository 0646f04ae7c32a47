// Tekton Pipelines' own controller (v1.15.1, built from the Go module proxy) as Quarry's client:
// a TaskRun and a PipelineRun whose taskRef/pipelineRef name `resolver: git`, `bundles` and
// `cluster` get their definitions from Quarry's resolvers. Each run's status.taskSpec /
// status.pipelineSpec holds the spec of the YAML Quarry's request returned, and its
// status.provenance.refSource is the request's refSource as Quarry wrote it (git: the commit,
// bundles: the manifest digest, cluster: Tekton's URI form and the sha256 of the returned bytes).
// A taskRef naming no resolver gets Tekton's config-defaults `default-resolver-type` from Tekton's
// own defaulting, so Quarry sees the type label as for any other request.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import type { RefSource, ResolutionRequest } from "@quarry/api";
import { applyObject } from "@quarry/devcluster/apply";
import { tknBundlePush } from "@quarry/devcluster/registry";
import { setTektonConfig } from "@quarry/devcluster/tekton";
import { waitUntil } from "@quarry/devcluster/wait";
import { dataOf, succeeded } from "@quarry/harness/scenario";
import {
  assertContains,
  createRun,
  params,
  pipelineRuns,
  requestOwnedBy,
  type TektonCluster,
  taskRuns,
  useTektonCluster,
  waitRun,
} from "@quarry/harness/tekton";
import type { KubeObject, ResourceType } from "@quarry/kube";
import yaml from "js-yaml";

const RESOLVERS = ["git", "bundles", "cluster"] as const;
type Resolver = (typeof RESOLVERS)[number];

/** Each source's definitions say where they came from, so a run shows which one Tekton read. */
const taskYaml = (from: Resolver) => `apiVersion: tekton.dev/v1
kind: Task
metadata:
  name: build
spec:
  params:
    - name: target
      type: string
      default: all
  steps:
    - name: build
      image: busybox
      script: echo build from ${from}
`;
const pipelineYaml = (from: Resolver) => `apiVersion: tekton.dev/v1
kind: Pipeline
metadata:
  name: ci
spec:
  tasks:
    - name: build
      taskSpec:
        steps:
          - name: build
            image: busybox
            script: echo pipeline from ${from}
`;

let bundleDigest = "";
const clusterUid: Record<string, string> = {};

const cluster = useTektonCluster("tekton-resolve", {
  gitFiles: { "tasks/build.yaml": taskYaml("git"), "pipelines/ci.yaml": pipelineYaml("git") },
  setup: async ({ scn, registry }) => {
    bundleDigest = (
      await tknBundlePush(registry.ref("team/defs:v1"), [taskYaml("bundles"), pipelineYaml("bundles")])
    ).digest;
    for (const doc of [taskYaml("cluster"), pipelineYaml("cluster")]) {
      const obj = yaml.load(doc) as KubeObject;
      const created = await applyObject(scn.admin, {
        ...obj,
        metadata: { ...obj.metadata, namespace: scn.namespace },
      });
      clusterUid[obj.kind!] = created.metadata.uid!;
    }
  },
});

type Kind = "Task" | "Pipeline";
const NAME: Record<Kind, string> = { Task: "build", Pipeline: "ci" };

function paramsFor(t: TektonCluster, resolver: Resolver, kind: Kind): Record<string, string> {
  switch (resolver) {
    case "git":
      return {
        url: t.gitUrl,
        revision: "main",
        pathInRepo: kind === "Task" ? "tasks/build.yaml" : "pipelines/ci.yaml",
      };
    case "bundles":
      return { bundle: t.registry.ref("team/defs:v1"), name: NAME[kind], kind: kind.toLowerCase() };
    case "cluster":
      return { kind: kind.toLowerCase(), name: NAME[kind] };
  }
}

/** What Quarry's request must say (checked against the request, then against the run). */
function expectedRefSource(
  t: TektonCluster,
  resolver: Resolver,
  kind: Kind,
  rr: ResolutionRequest,
): RefSource {
  switch (resolver) {
    case "git":
      return {
        uri: `git+${t.gitUrl}`,
        digest: { sha1: t.gitCommit },
        entryPoint: paramsFor(t, resolver, kind).pathInRepo,
      };
    case "bundles":
      return {
        uri: `${t.registry.host}/team/defs`,
        digest: { sha256: bundleDigest.slice("sha256:".length) },
        entryPoint: NAME[kind],
      };
    case "cluster":
      return {
        // Tekton's own cluster resolver's form: the singular kind
        uri: `/apis/tekton.dev/v1/namespaces/${t.scn.namespace}/${kind.toLowerCase()}/${NAME[kind]}@${clusterUid[kind]}`,
        digest: {
          sha256: createHash("sha256")
            .update(Buffer.from(rr.status?.data ?? "", "base64"))
            .digest("hex"),
        },
      };
  }
}

const RUN_KINDS: { kind: Kind; rt: ResourceType; ref: string; specField: "taskSpec" | "pipelineSpec" }[] = [
  { kind: "Task", rt: taskRuns, ref: "taskRef", specField: "taskSpec" },
  { kind: "Pipeline", rt: pipelineRuns, ref: "pipelineRef", specField: "pipelineSpec" },
];

for (const { kind, rt, ref, specField } of RUN_KINDS) {
  test(`${rt.kind}s with ${ref}.resolver git, bundles and cluster carry Quarry's definition and refSource`, async () => {
    const t = cluster();
    const names = RESOLVERS.map((r) => `${kind.toLowerCase()}-${r}`);
    await Promise.all(
      RESOLVERS.map((r, i) =>
        createRun(t, rt, names[i]!, { [ref]: { resolver: r, params: params(paramsFor(t, r, kind)) } }),
      ),
    );
    for (const [i, resolver] of RESOLVERS.entries()) {
      const name = names[i]!;
      const run = await waitRun(
        t,
        rt,
        name,
        `status.${specField} stored`,
        (x) => x.status?.[specField] !== undefined,
      );
      const rr = await requestOwnedBy(t, run);
      assert.equal(rr.metadata.labels?.["resolution.tekton.dev/type"], resolver, `${name}: request type`);
      assert.equal(succeeded(rr)?.status, "True", `${name}: Quarry resolved the request`);
      const doc = yaml.load(dataOf(rr)) as { kind: string; spec: Record<string, unknown> };
      assert.equal(doc.kind, kind);
      assert.match(
        JSON.stringify(doc.spec),
        new RegExp(`from ${resolver}`),
        `${name}: ${resolver}'s definition`,
      );
      // Tekton stores the spec it read (plus its defaults) for auditing
      assertContains(run.status?.[specField], doc.spec, `${name}.status.${specField}`);
      assert.deepEqual(
        rr.status?.refSource,
        expectedRefSource(t, resolver, kind, rr),
        `${name}: Quarry's refSource`,
      );
      assert.deepEqual(
        run.status?.provenance?.refSource,
        rr.status?.refSource,
        `${name}: status.provenance.refSource is Quarry's`,
      );
      // no pod ever runs (no node): only a failure about the definition would be Quarry's doing
      const failed = run.status?.conditions?.find((c) => c.type === "Succeeded" && c.status === "False");
      assert.doesNotMatch(
        failed?.reason ?? "",
        /Resolution|CouldntGet|Validation/,
        `${name}: ${failed?.message}`,
      );
    }
  });
}

test("a taskRef naming no resolver gets config-defaults' default-resolver-type from Tekton; Quarry answers it", async () => {
  const t = cluster();
  // Tekton's reconciler applies its defaults to each run it reads (its webhook is not running here)
  await setTektonConfig(t.scn.admin, "config-defaults", { "default-resolver-type": "git" });
  // the controller reads config-defaults from its informer: a run made before it has the new
  // value would stay without a resolver, so each try is a new run
  const run = await waitUntil("a TaskRun defaulted to resolver git", async () => {
    const name = `defaulted-${Date.now()}`;
    await createRun(t, taskRuns, name, { taskRef: { params: params(paramsFor(t, "git", "Task")) } });
    const seen = await waitRun(
      t,
      taskRuns,
      name,
      "defaulted and resolved, or failed",
      (x) =>
        x.status?.taskSpec !== undefined || x.status?.conditions?.some((c) => c.status === "False") === true,
    );
    return seen.status?.taskSpec !== undefined && seen;
  });
  const rr = await requestOwnedBy(t, run);
  assert.equal(rr.metadata.labels?.["resolution.tekton.dev/type"], "git");
  assert.equal(succeeded(rr)?.status, "True");
  assert.match(JSON.stringify(run.status?.taskSpec), /from git/);
  assert.deepEqual(run.status?.provenance?.refSource, expectedRefSource(t, "git", "Task", rr));
});
