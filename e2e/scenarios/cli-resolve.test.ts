// `quarry resolve` creates a request, waits, prints the YAML (exit 0) or the
// failure reason and message (exit 1).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { applyObject } from "@quarry/devcluster/apply";
import { repoRoot } from "@quarry/devcluster/paths";
import { taskManifest, useScenario } from "@quarry/harness/scenario";

const run = promisify(execFile);
const scenario = useScenario("cli-resolve", {
  setup: async (scn) => {
    await applyObject(scn.admin, taskManifest(scn.namespace, "hello"));
  },
  start: ["lifecycle-controller", "cluster-resolver"],
});

function quarry(...args: string[]) {
  const scn = scenario();
  return run(
    process.execPath,
    [
      join(repoRoot, "cli", "src", "main.ts"),
      ...args,
      "-n",
      scn.namespace,
      "--kubeconfig",
      scn.cp.adminKubeconfig,
    ],
    { timeout: 60_000 },
  );
}

test("resolves a Task and prints it with its refSource", async () => {
  const { stdout, stderr } = await quarry("resolve", "cluster", "kind=task", "name=hello");
  assert.match(stdout, /kind: Task/);
  assert.match(stdout, /name: hello/);
  assert.match(
    stderr,
    /# refSource: \/apis\/tekton\.dev\/v1\/namespaces\/.*\/task\/hello@.* sha256:[0-9a-f]{64}/,
  );
});

test("a failure exits 1 with the reason and message", async () => {
  await assert.rejects(
    quarry("resolve", "cluster", "kind=task", "name=absent"),
    (err: Error & { code?: number; stderr?: string }) => {
      assert.equal(err.code, 1);
      assert.match(err.stderr ?? "", /ResolutionFailed \(NotFound\): task .*\/absent not found/);
      return true;
    },
  );
});
