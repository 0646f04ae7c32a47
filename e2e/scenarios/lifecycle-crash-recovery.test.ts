// SIGKILL the lifecycle controller while 200 requests are pending, keep
// creating and resolving requests while it is down, restart it: every request
// reaches its terminal condition, each exactly once.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { resolutionRequests } from "@quarry/api";
import { waitUntil } from "@quarry/devcluster/wait";
import {
  createRequest,
  newRequest,
  newScenario,
  type Scenario,
  setLifecycleConfig,
} from "@quarry/harness/scenario";
import {
  countEvents,
  recordTransitions,
  type TransitionRecorder,
  terminalStates,
} from "@quarry/harness/transitions";

const N = 200;
let scn: Scenario;
let recorder: TransitionRecorder;
before(async () => {
  scn = await newScenario("lc-crash");
  await setLifecycleConfig(scn, { "default-maximum-resolution-timeout": "20s" });
  recorder = recordTransitions(scn.admin, scn.namespace);
});
after(async () => {
  recorder.stop();
  await scn.cleanup();
});

async function inBatches(names: string[], fn: (name: string) => Promise<unknown>) {
  for (let i = 0; i < names.length; i += 20) await Promise.all(names.slice(i, i + 20).map(fn));
}

test("killed mid-flight and restarted: all 200 requests end exactly once", { timeout: 120_000 }, async () => {
  const names = Array.from({ length: N }, (_, i) => `req-${String(i).padStart(3, "0")}`);
  const resolved = new Set(names.filter((_, i) => i % 2 === 0));
  const first = await scn.start("lifecycle-controller");
  await inBatches(names.slice(0, N / 2), (n) =>
    createRequest(scn.admin, newRequest(scn.namespace, n, { "resolution.tekton.dev/type": "git" })),
  );
  first.kill("SIGKILL");
  assert.equal((await first.exited).signal, "SIGKILL");
  // while it is down: more requests arrive and a "resolver" answers half of all requests
  await inBatches(names.slice(N / 2), (n) =>
    createRequest(scn.admin, newRequest(scn.namespace, n, { "resolution.tekton.dev/type": "git" })),
  );
  const data = Buffer.from("kind: Task\n").toString("base64");
  await inBatches([...resolved], (n) =>
    scn.admin.mergePatch(resolutionRequests, scn.namespace, n, { status: { data } }, "status"),
  );
  await scn.start("lifecycle-controller");

  await waitUntil(
    "all terminal",
    () => names.every((n) => terminalStates(recorder.transitions.get(n) ?? []).length > 0),
    { timeoutMs: 90_000, intervalMs: 500 },
  ).catch((err: Error) => {
    const pending = names.filter((n) => terminalStates(recorder.transitions.get(n) ?? []).length === 0);
    const sample = pending.slice(0, 5).map((n) => `${n}: ${JSON.stringify(recorder.transitions.get(n))}`);
    throw new Error(`${err.message}; ${pending.length} not terminal, e.g. ${sample.join("; ")}`);
  });
  // let any stray duplicate write surface before judging
  await new Promise((r) => setTimeout(r, 1500));
  for (const n of names) {
    const terminal = terminalStates(recorder.transitions.get(n) ?? []);
    assert.equal(terminal.length, 1, `${n}: ${JSON.stringify(recorder.transitions.get(n))}`);
    assert.equal(terminal[0], resolved.has(n) ? "True/" : "False/ResolutionTimedOut", n);
  }
  const timeouts = await countEvents(scn.admin, scn.namespace, "ResolutionTimedOut");
  for (const n of names.filter((x) => !resolved.has(x)))
    assert.equal(timeouts.get(n), 1, `${n} timeout events`);
});
