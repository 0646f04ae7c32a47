// Restart kube-apiserver while Wait runs of both flavours are in flight and
// runs of a kind nobody serves wait out their initial-update timeout: the
// run-controller and the Wait controller reconnect without restarting, and
// every run reaches its one expected terminal condition exactly once.
// Uses a private control plane so the restart does not disturb other tests.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { AnyRun, RunFlavour } from "@quarry/api";
import { type ControlPlane, startControlPlane } from "@quarry/devcluster/controlplane";
import { installQuarryApi, type RunCrdMode } from "@quarry/devcluster/install";
import type { RunningService } from "@quarry/devcluster/service";
import { waitUntil } from "@quarry/devcluster/wait";
import { adminClient } from "@quarry/harness/env";
import {
  createRun,
  FLAVOURS,
  getRun,
  type RunTransitionRecorder,
  recordRunTransitions,
  runEventCountsFor,
  runObject,
  runSucceeded,
  WAIT_REF,
  waitForRun,
} from "@quarry/harness/runs";
import { newScenario, type Scenario, setConfig } from "@quarry/harness/scenario";
import { terminalStates } from "@quarry/harness/transitions";

const mode = (process.env.QUARRY_E2E_RUN_CRDS ?? "quarry") as RunCrdMode;
const skip = mode === "none" ? "no run CRDs installed" : false;
const NOBODY = { apiVersion: "example.dev/v1", kind: "Nobody" } as const;

const inFlight = (run: AnyRun) => runSucceeded(run)?.status === "Unknown" && !!run.status?.startTime;
const runsOf = (flavour: RunFlavour, prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => [flavour, `${prefix}-${flavour.toLowerCase()}-${i}`] as const);
const waits = FLAVOURS.flatMap((f) => runsOf(f, "wait", 5));
const nobody = [...runsOf("CustomRun", "nobody", 10), ...runsOf("Run", "nobody", 4)];

let cp: ControlPlane | undefined;
let scn: Scenario | undefined;
const recorders = new Map<RunFlavour, RunTransitionRecorder>();
before(async () => {
  if (skip) return;
  cp = await startControlPlane();
  const info = { server: cp.server, caFile: cp.caFile, dir: cp.dir, adminKubeconfig: cp.adminKubeconfig };
  await installQuarryApi(adminClient(info), { runCrds: mode });
  scn = await newScenario("rc-apirestart", { cp: info });
  await setConfig(scn, "run-controller-config", {
    "initial-update-timeout": "6s",
    "enforcement-grace": "2s",
  });
  for (const f of FLAVOURS) recorders.set(f, recordRunTransitions(scn.admin, f, scn.namespace));
  await scn.start("run-controller");
  await scn.start("wait-task");
});
after(async () => {
  for (const r of recorders.values()) r.stop();
  await scn?.cleanup();
  await cp?.stop();
});

/** Still the process the test started: not exited, and its ops server answers /healthz. */
async function stillRunning(svc: RunningService): Promise<void> {
  const exited = await Promise.race([
    svc.exited.then(() => true),
    new Promise((r) => setTimeout(r, 0, false)),
  ]);
  assert.equal(exited, false, `${svc.name} (pid ${svc.pid}) exited`);
  assert.doesNotThrow(() => process.kill(svc.pid, 0), `${svc.name} pid ${svc.pid} gone`);
  assert.equal((await svc.ops("/healthz")).status, 200, `${svc.name} /healthz`);
}

test("runs in flight across an apiserver restart each end once, as expected; no service restarts", {
  skip,
  timeout: 150_000,
}, async (t) => {
  const s = scn!;
  const services = [...s.services];
  const pids = services.map((svc) => svc.pid);
  await Promise.all(
    waits.map(([flavour, name]) =>
      createRun(
        s.admin,
        runObject(flavour, s.namespace, { name, ref: WAIT_REF, params: [{ name: "duration", value: "4s" }] }),
      ),
    ),
  );
  await Promise.all(
    nobody.map(([flavour, name]) =>
      createRun(s.admin, runObject(flavour, s.namespace, { name, ref: NOBODY })),
    ),
  );
  // the Wait runs are in flight: started, not done
  for (const [flavour, name] of waits) await waitForRun(s, flavour, name, inFlight, 15_000);
  const restartAt = Date.now();
  await cp!.restartApiserver();
  const downMs = Date.now() - restartAt;
  t.diagnostic(`apiserver restart took ${downMs} ms`);

  const all = [...waits, ...nobody];
  const transitions = (flavour: RunFlavour, name: string) =>
    recorders.get(flavour)?.transitions.get(name) ?? [];
  await waitUntil(
    "every run terminal",
    () => all.every(([f, n]) => terminalStates(transitions(f, n)).length > 0),
    { timeoutMs: 60_000, intervalMs: 500 },
  ).catch((err: Error) => {
    const pending = all.filter(([f, n]) => terminalStates(transitions(f, n)).length === 0);
    throw new Error(
      `${err.message} (apiserver restart took ${downMs} ms); not terminal: ${pending
        .map(([f, n]) => `${f} ${n} ${JSON.stringify(transitions(f, n))}`)
        .join("; ")}`,
    );
  });
  // let any stray second write surface before judging
  await new Promise((r) => setTimeout(r, 2000));

  const failures: string[] = [];
  for (const [flavour, name] of all) {
    const expected = name.startsWith("wait-") ? "True/DurationElapsed" : "False/ControllerNotFound";
    const terminal = terminalStates(transitions(flavour, name));
    if (terminal.length !== 1 || terminal[0] !== expected)
      failures.push(`${flavour} ${name}: ${JSON.stringify(transitions(flavour, name))}`);
  }
  assert.deepEqual(failures, [], `one terminal condition per run (apiserver restart took ${downMs} ms)`);
  for (const [flavour, name] of waits) {
    const run = await getRun(s.admin, flavour, s.namespace, name);
    assert.deepEqual(run.status?.results, [{ name: "waited", value: "4s" }], name);
  }
  for (const flavour of FLAVOURS) {
    const names = nobody.filter(([f]) => f === flavour).map(([, n]) => n);
    const events = await runEventCountsFor(s.admin, s.namespace, flavour, "ControllerNotFound", names);
    for (const [f, name] of nobody.filter(([f]) => f === flavour))
      assert.deepEqual(events.get(name), { objects: 1, count: 1 }, `${f} ${name}: one Warning Event`);
    for (const [, name] of waits) assert.ok(!events.has(name), `${name} was not enforced`);
  }

  assert.deepEqual(
    s.services.map((svc) => svc.pid),
    pids,
    "no service was started again",
  );
  for (const svc of services) await stillRunning(svc);
});
