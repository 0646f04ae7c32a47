// Two lifecycle reconcilers on one Tekton cluster: Tekton's pipelines controller has its own
// ResolutionRequest reconciler, and Quarry's lifecycle controller runs beside it (Quarry's
// choice, docs/tekton-drop-in.md §3). Both time requests out, so the shorter global deadline
// wins, whichever side holds it: a TaskRun whose resolver nobody serves (`tarball`) fails
// TaskRunResolutionFailed after Quarry's 4s with Quarry's "no resolver" message while Tekton's
// is 1m; with the deadlines swapped (Tekton 3s, Quarry 1m) after Tekton's 3s with Tekton's
// message. Either way the request passes through one in-progress and one terminal state: the
// two reconcilers agree on everything but the deadline, and never undo each other's writes.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { setTektonConfig, TEKTON_NAMESPACE } from "@quarry/devcluster/tekton";
import { waitUntil } from "@quarry/devcluster/wait";
import { setLifecycleConfig, succeeded } from "@quarry/harness/scenario";
import {
  createRun,
  params,
  requestOwnedBy,
  type TektonCluster,
  taskRuns,
  useTektonCluster,
  waitRun,
} from "@quarry/harness/tekton";
import { recordTransitions, type TransitionRecorder } from "@quarry/harness/transitions";

const TIMEOUT_KEY = "default-maximum-resolution-timeout";
let transitions: TransitionRecorder | undefined;

const cluster = useTektonCluster("tekton-lc", {
  gitFiles: { "README.md": "nothing to resolve here\n" },
  lifecycleConfig: { [TIMEOUT_KEY]: "4s" },
  setup: async ({ scn }) => {
    // Tekton logs the config it loaded only at debug level (the key is the process's component
    // name, not the shipped loglevel.controller): the second test waits for it
    await setTektonConfig(scn.admin, "config-logging", { "loglevel.tekton-pipelines-controller": "debug" });
    transitions = recordTransitions(scn.admin, scn.namespace);
  },
});
after(() => transitions?.stop());

/** A TaskRun whose taskRef names a resolver type no process serves. */
async function unservedRun(t: TektonCluster, name: string) {
  const started = Date.now();
  await createRun(t, taskRuns, name, {
    taskRef: { resolver: "tarball", params: params({ name: "build", kind: "task" }) },
  });
  const run = await waitRun(
    t,
    taskRuns,
    name,
    "failed",
    (r) => r.status?.conditions?.some((c) => c.type === "Succeeded" && c.status === "False") ?? false,
  );
  return { run, elapsedMs: Date.now() - started, rr: await requestOwnedBy(t, run) };
}

function assertOneTerminal(rrName: string): void {
  assert.deepEqual(
    transitions?.transitions.get(rrName)?.filter((s) => s !== "none"),
    ["Unknown/ResolutionInProgress", "False/ResolutionTimedOut"],
    `${rrName}: one in-progress and one terminal state`,
  );
}

test("Quarry's deadline shorter than Tekton's: Quarry times the request out, with its message", async () => {
  const t = cluster();
  const { run, elapsedMs, rr } = await unservedRun(t, "quarry-deadline");
  const cond = succeeded(rr);
  assert.equal(cond?.reason, "ResolutionTimedOut");
  assert.equal(cond?.message, "no resolver for type tarball answered within 4s");
  const runCond = run.status?.conditions?.find((c) => c.type === "Succeeded");
  assert.equal(runCond?.reason, "TaskRunResolutionFailed");
  assert.ok(runCond?.message?.includes(cond.message), runCond?.message);
  assert.ok(elapsedMs < 30_000, `failed after ${elapsedMs} ms, long before Tekton's 1m`);
  assertOneTerminal(rr.metadata.name!);
});

test("Tekton's deadline shorter than Quarry's: Tekton times the request out, with its message", async () => {
  const t = cluster();
  const lifecycle = t.scn.services.find((s) => s.name === "lifecycle-controller")!;
  const quarryLogged = lifecycle.logs().length;
  await setLifecycleConfig(t.scn, { [TIMEOUT_KEY]: "1m" });
  await waitUntil("Quarry's lifecycle controller loads 1m", async () =>
    lifecycle.logs().slice(quarryLogged).includes('"maxResolutionTimeoutMs":60000'),
  );
  const tektonLogged = t.tekton.logs().length;
  await setTektonConfig(t.scn.admin, "config-defaults", { [TIMEOUT_KEY]: "3s" });
  await waitUntil(`Tekton's controller loads 3s (${TEKTON_NAMESPACE}/config-defaults)`, async () =>
    /config-defaults.*added or updated.*DefaultMaximumResolutionTimeout:3000000000/.test(
      t.tekton.logs().slice(tektonLogged),
    ),
  );
  const { run, elapsedMs, rr } = await unservedRun(t, "tekton-deadline");
  const cond = succeeded(rr);
  assert.equal(cond?.reason, "ResolutionTimedOut");
  assert.equal(cond?.message, "resolution took longer than global timeout of 3s");
  const runCond = run.status?.conditions?.find((c) => c.type === "Succeeded");
  assert.equal(runCond?.reason, "TaskRunResolutionFailed");
  assert.ok(runCond?.message?.includes(cond.message), runCond?.message);
  assert.ok(elapsedMs < 30_000, `failed after ${elapsedMs} ms, long before Quarry's 1m`);
  assertOneTerminal(rr.metadata.name!);
});
