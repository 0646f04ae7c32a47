// Tekton Pipelines' own controller (v1.15.1) with `taskRef.resolver: cluster` under Tekton's
// cluster-resolver `*` semantics: cluster-resolver-config says `blocked-namespaces: "*"` and
// `allowed-namespaces: <shared>`. As Tekton's cluster resolver decides (pkg/resolution/resolver/
// cluster: a listed blocked namespace is refused, a listed allowed one is read, then `*` in
// blocked-namespaces refuses every other), a Task in <shared> resolves, and the same Task in
// another namespace, the run's own included, fails with Tekton's message "only explicit allowed
// access to namespaces is allowed", which Tekton's controller ends TaskRunResolutionFailed.
// Tekton's resolvers Deployment is at zero replicas, as an operator leaves it for Quarry: the
// harness never starts Tekton's `resolvers` process; the audit log shows Quarry answered.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import { applyObject } from "@quarry/devcluster/apply";
import { dataOf, setConfig, succeeded, taskManifest } from "@quarry/harness/scenario";
import {
  assertAnsweredByQuarry,
  assertContains,
  createRun,
  expectResolutionFailure,
  params,
  requestOwnedBy,
  type TektonCluster,
  taskRuns,
  useTektonCluster,
  waitRun,
} from "@quarry/harness/tekton";
import type { KubeObject } from "@quarry/kube";
import yaml from "js-yaml";

const TASK = "common";
let shared = "";
let other = "";
let sharedUid = "";

const cluster = useTektonCluster("tekton-cluster-star", {
  gitFiles: { "README.md": "unused\n" },
  auditLog: true,
  setup: async ({ scn }) => {
    shared = await scn.extraNamespace("shared");
    other = await scn.extraNamespace("other");
    for (const ns of [shared, other, scn.namespace]) {
      const created = await applyObject<KubeObject>(scn.admin, taskManifest(ns, TASK));
      if (ns === shared) sharedUid = created.metadata.uid!;
    }
    await setConfig(scn, "cluster-resolver-config", {
      "blocked-namespaces": "*",
      "allowed-namespaces": shared,
    });
  },
  services: { "lifecycle-controller": {}, "cluster-resolver": {} },
});

const clusterRef = (namespace?: string) => ({
  taskRef: {
    resolver: "cluster",
    params: params({ kind: "task", name: TASK, ...(namespace ? { namespace } : {}) }),
  },
});

test("blocked-namespaces * with an allowed namespace: the allowed namespace's Task resolves as Tekton's would", async () => {
  const t: TektonCluster = cluster();
  await createRun(t, taskRuns, "from-shared", clusterRef(shared));
  const run = await waitRun(
    t,
    taskRuns,
    "from-shared",
    "status.taskSpec stored",
    (x) => x.status?.taskSpec !== undefined,
  );
  const rr = await requestOwnedBy(t, run);
  assert.equal(succeeded(rr)?.status, "True", JSON.stringify(succeeded(rr)));
  const doc = yaml.load(dataOf(rr)) as {
    kind: string;
    metadata: { name: string };
    spec: Record<string, unknown>;
  };
  assert.equal(doc.kind, "Task");
  assert.equal(doc.metadata.name, TASK);
  assertContains(run.status?.taskSpec, taskManifest(shared, TASK).spec, "status.taskSpec");
  // Tekton's cluster resolver's refSource: the singular kind, the uid, the sha256 of the data
  const refSource = {
    uri: `/apis/tekton.dev/v1/namespaces/${shared}/task/${TASK}@${sharedUid}`,
    digest: {
      sha256: createHash("sha256")
        .update(Buffer.from(rr.status?.data ?? "", "base64"))
        .digest("hex"),
    },
  };
  assert.deepEqual(rr.status?.refSource, refSource);
  assert.deepEqual(run.status?.provenance?.refSource, refSource);
  await assertAnsweredByQuarry(t, rr.metadata.name!, "cluster-resolver");
});

test("blocked-namespaces * refuses every namespace it does not allow, the run's own included", async () => {
  const t = cluster();
  const cases = [
    { name: "from-other", namespace: other },
    { name: "from-own", namespace: undefined },
  ];
  await Promise.all(cases.map((c) => createRun(t, taskRuns, c.name, clusterRef(c.namespace))));
  for (const c of cases) {
    const { request } = await expectResolutionFailure(t, taskRuns, c.name, {
      service: "cluster-resolver",
      runReason: "TaskRunResolutionFailed",
    });
    assert.equal(request.status?.annotations?.["quarry.dev/reason"], "Forbidden", c.name);
    assert.match(
      succeeded(request)?.message ?? "",
      /only explicit allowed access to namespaces is allowed/,
      `${c.name}: Tekton's message`,
    );
  }
});
