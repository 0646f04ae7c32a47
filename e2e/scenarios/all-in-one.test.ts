// All-in-one mode: services/all-in-one runs the lifecycle controller, the
// run-controller and every resolver in one process on one ServiceRuntime,
// under one ServiceAccount holding the union of their charts' rules. A cluster
// request, a git request and a CustomRun whose definition comes from git all
// complete through that one process, which serves /readyz and /metrics on its
// one ops port for every component.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { applyObject } from "@quarry/devcluster/apply";
import { buildStandardRepo, type StandardRepo, TASK_V2 } from "@quarry/devcluster/git-repos";
import { type GitServer, startGitServer } from "@quarry/devcluster/git-server";
import { repoRoot } from "@quarry/devcluster/paths";
import type { RunningService } from "@quarry/devcluster/service";
import { startAllInOne } from "@quarry/harness/all-in-one-scenario";
import { sumMetric } from "@quarry/harness/metrics";
import { ANNOTATION_RUN_REF_SOURCE, recordedRequest, waitRemoteRef } from "@quarry/harness/run-ref-scenario";
import { createRun, runObject, waitForRun } from "@quarry/harness/runs";
import {
  createRequest,
  dataOf,
  getRequest,
  newRequest,
  resolvedOk,
  setConfig,
  succeeded,
  taskManifest,
  useScenario,
  waitForRequest,
} from "@quarry/harness/scenario";
import type { KubeObject } from "@quarry/kube";
import yaml from "js-yaml";

const cacheDir = mkdtempSync(join(tmpdir(), "quarry-e2e-all-in-one-cache-"));
let server: GitServer | undefined;
let repo: StandardRepo | undefined;
let process_: RunningService | undefined;

const scenario = useScenario("all-in-one", {
  setup: async (scn) => {
    server = await startGitServer();
    repo = await buildStandardRepo(server.root);
    // no custom-task controller runs: the initial-update timeout must not end the run
    await setConfig(scn, "run-controller-config", { "initial-update-timeout": "10m" });
    process_ = await startAllInOne(scn, { QUARRY_GIT_CACHE_DIR: cacheDir });
  },
});
after(async () => {
  repo?.builder.dispose();
  await server?.stop();
  rmSync(cacheDir, { recursive: true, force: true });
});

/** The resolvers' one controller, named by their types (the bundle resolver's is Tekton's `bundles`). */
const resolverController = "cluster+git+bundles+pipe+http+hub-resolver";

test("a cluster request: the Task, completed by the same process", async () => {
  const scn = scenario();
  const created: KubeObject = await applyObject(scn.admin, taskManifest(scn.namespace, "from-cluster"));
  await createRequest(
    scn.admin,
    newRequest(
      scn.namespace,
      "cluster-req",
      { "resolution.tekton.dev/type": "cluster" },
      { name: "from-cluster" },
    ),
  );
  const rr = await waitForRequest(scn, "cluster-req", resolvedOk);
  const doc = yaml.load(dataOf(rr)) as { kind: string; metadata: { name: string } };
  assert.equal(doc.kind, "Task");
  assert.equal(doc.metadata.name, "from-cluster");
  assert.equal(
    rr.status?.refSource?.uri,
    `/apis/tekton.dev/v1/namespaces/${scn.namespace}/task/from-cluster@${created.metadata.uid}`,
  );
});

test("a git request: the file at the branch, its commit in refSource", async () => {
  const scn = scenario();
  const url = server!.url(repo!.name);
  await createRequest(
    scn.admin,
    newRequest(
      scn.namespace,
      "git-req",
      { "resolution.tekton.dev/type": "git" },
      { url, revision: "main", pathInRepo: "task.yaml" },
    ),
  );
  const rr = await waitForRequest(scn, "git-req", resolvedOk);
  assert.equal(dataOf(rr), TASK_V2);
  assert.deepEqual(rr.status?.refSource, {
    uri: `git+${url}`,
    digest: { sha1: repo!.main },
    entryPoint: "task.yaml",
  });
});

test("a CustomRun with a git ref: the run-controller's request resolved, provenance recorded", async () => {
  const scn = scenario();
  const url = server!.url(repo!.name);
  const ref = waitRemoteRef("git", { url, revision: "main", pathInRepo: "task.yaml" });
  await createRun(scn.admin, runObject("CustomRun", scn.namespace, { name: "remote-wait", ref }));
  const run = await waitForRun(
    scn,
    "CustomRun",
    "remote-wait",
    (r) => r.status?.annotations?.[ANNOTATION_RUN_REF_SOURCE] !== undefined,
  );
  const requestName = recordedRequest(run);
  assert.ok(requestName, JSON.stringify(run.status));
  const rr = await getRequest(scn.admin, scn.namespace, requestName);
  assert.equal(succeeded(rr)?.status, "True", JSON.stringify(succeeded(rr)));
  assert.equal(dataOf(rr), TASK_V2);
  assert.deepEqual(run.status?.provenance?.refSource, rr.status?.refSource);
  assert.deepEqual(rr.status?.refSource?.digest, { sha1: repo!.main });
});

test("one ops port: /readyz and /metrics answer for every component", async () => {
  const ready = await process_!.ops("/readyz");
  assert.equal(ready.status, 200, ready.body);
  const { status, body } = await process_!.ops("/metrics");
  assert.equal(status, 200);
  // every component's controller reports on the one queue-metrics family
  for (const controller of ["lifecycle", "run-customrun", "pipe-customrun", resolverController])
    assert.match(
      body,
      new RegExp(`quarry_workqueue_depth\\{[^}]*controller="${controller.replaceAll("+", "\\+")}"`),
      controller,
    );
  // the resolvers' one histogram, by type, from the requests above
  for (const type of ["cluster", "git"])
    assert.ok(
      sumMetric(body, "quarry_resolution_duration_seconds_count", { type, outcome: "succeeded" }) >= 1,
      type,
    );
  // the git engine's own metrics are registered once, beside the others
  assert.match(body, /^quarry_git_cache_repositories/m);
  assert.equal(process_!.logs().match(/"msg":"controllers started"/g)?.length, 1, "one runtime started");
});

test("QUARRY_COMPONENTS naming an unknown component: the process exits before serving, naming it", async () => {
  const child = spawn(process.execPath, [join(repoRoot, "services", "all-in-one", "src", "main.ts")], {
    env: { ...process.env, QUARRY_COMPONENTS: "lifecycle,gti" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (b: Buffer) => {
    stderr += b.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  assert.notEqual(code, 0);
  assert.match(stderr, /QUARRY_COMPONENTS: unknown gti/);
});
