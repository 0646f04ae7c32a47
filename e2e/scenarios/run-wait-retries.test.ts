// Retries of a Wait (spec.retries): every attempt that times out is appended
// to status.retriesStatus and the next one starts, the run staying Unknown
// until the last attempt ends; an attempt that overran its timeout while the
// controller was stalled (SIGSTOP) is retried and the next one can succeed.
// The run-controller's grace is 60s, so it never steps in.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { AnyRun, RunFlavour, RunStatus } from "@quarry/api";
import {
  createRun,
  enforcementCount,
  FLAVOURS,
  type RunState,
  recordRunStates,
  runObject,
  runStarted,
  runSucceeded,
  WAIT_REF,
  waitForRun,
} from "@quarry/harness/runs";
import { setConfig, useScenario } from "@quarry/harness/scenario";

const scenario = useScenario("run-wait-retries", {
  setup: (scn) =>
    setConfig(scn, "run-controller-config", { "initial-update-timeout": "5s", "enforcement-grace": "60s" }),
  start: ["run-controller", "wait-task"],
});

const TIMED_OUT = { CustomRun: "CustomRunTimedOut", Run: "RunTimedOut" } as const;

const succeededOf = (attempt: RunStatus) => attempt.conditions?.find((c) => c.type === "Succeeded");

/** Never False (or True) before the final state; the attempt count only grows. */
function assertNoEarlyEnd(seen: RunState[], finalStatus: string, retries: number) {
  const shown = seen.map((s) => `${s.status}/${s.reason}#${s.retries}`).join(" → ");
  assert.ok(seen.length >= 2, shown);
  const last = seen[seen.length - 1]!;
  assert.equal(last.status, finalStatus, shown);
  assert.equal(last.retries, retries, shown);
  for (const s of seen.slice(0, -1))
    assert.ok(s.status === "none" || s.status === "Unknown", `ended early: ${shown}`);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i]!.retries >= seen[i - 1]!.retries, shown);
  // the watch saw every attempt running
  for (let k = 0; k <= retries; k++)
    assert.ok(
      seen.some((s) => s.status === "Unknown" && s.retries === k),
      `attempt ${k + 1} never seen running: ${shown}`,
    );
}

/** `count` attempts in retriesStatus, each timed out after `timeout` (Tekton's reason and message). */
function assertTimedOutAttempts(run: AnyRun, flavour: RunFlavour, count: number, timeout: "1s" | "3s") {
  const name = run.metadata.name;
  const overMs = timeout === "1s" ? 1000 : 3000;
  const attempts = run.status?.retriesStatus ?? [];
  assert.equal(attempts.length, count);
  for (const [i, attempt] of attempts.entries()) {
    const c = succeededOf(attempt);
    assert.equal(c?.status, "False", `attempt ${i + 1}`);
    assert.equal(c?.reason, TIMED_OUT[flavour], `attempt ${i + 1}`);
    assert.equal(c?.message, `${flavour} "${name}" failed to finish within "${timeout}"`);
    assert.equal(attempt.retriesStatus, undefined, "an attempt carries no retriesStatus of its own");
    const ran = Date.parse(attempt.completionTime!) - Date.parse(attempt.startTime!);
    assert.ok(ran >= overMs, `attempt ${i + 1} ran ${ran} ms`);
  }
}

for (const flavour of FLAVOURS) {
  test(`${flavour}: a Wait that times out with retries 2 ends ${TIMED_OUT[flavour]} after 3 attempts, never False before`, async () => {
    const scn = scenario();
    const name = `retries-fail-${flavour.toLowerCase()}`;
    const rec = recordRunStates(scn.admin, flavour, scn.namespace);
    try {
      await rec.ready;
      await createRun(
        scn.admin,
        runObject(flavour, scn.namespace, {
          name,
          ref: WAIT_REF,
          params: [{ name: "duration", value: "30s" }],
          timeout: "1s",
          retries: 2,
        }),
      );
      const run = await waitForRun(scn, flavour, name, undefined, 15_000);
      const c = runSucceeded(run)!;
      assert.equal(c.status, "False");
      assert.equal(c.reason, TIMED_OUT[flavour]);
      assert.equal(c.message, `${flavour} "${name}" failed to finish within "1s"`);
      assertTimedOutAttempts(run, flavour, 2, "1s");
      // the last attempt started after the others ended
      const lastStart = Date.parse(run.status!.startTime!);
      assert.ok(lastStart >= Date.parse(run.status!.retriesStatus![1]!.completionTime!));
      assert.ok(Date.parse(run.status!.completionTime!) - lastStart >= 1000);

      await waitFor(() => (rec.states.get(name)?.at(-1)?.status ?? "") === "False");
      assertNoEarlyEnd(rec.states.get(name)!, "False", 2);
    } finally {
      rec.stop();
    }
  });

  test(`${flavour}: an attempt that overran its timeout while the Wait controller was stopped is retried, and the retry succeeds`, async () => {
    const scn = scenario();
    const wait = scn.services.find((s) => s.name === "wait-task")!;
    const name = `retries-ok-${flavour.toLowerCase()}`;
    const rec = recordRunStates(scn.admin, flavour, scn.namespace);
    try {
      await rec.ready;
      await createRun(
        scn.admin,
        runObject(flavour, scn.namespace, {
          name,
          ref: WAIT_REF,
          params: [{ name: "duration", value: "2s" }],
          timeout: "3s",
          retries: 1,
        }),
      );
      await waitForRun(scn, flavour, name, runStarted, 10_000);
      process.kill(wait.pid, "SIGSTOP");
      try {
        await new Promise((r) => setTimeout(r, 4000));
      } finally {
        process.kill(wait.pid, "SIGCONT");
      }
      const run = await waitForRun(scn, flavour, name, undefined, 15_000);
      const c = runSucceeded(run)!;
      assert.equal(c.status, "True", c.message);
      assert.equal(c.reason, "DurationElapsed");
      assert.equal(c.message, "The wait duration has elapsed");
      assert.deepEqual(run.status?.results, [{ name: "waited", value: "2s" }]);
      assertTimedOutAttempts(run, flavour, 1, "3s");
      // counted from the end of the attempt's whole-second startTime: 2s, up to 1s late, never early
      const ran = Date.parse(run.status!.completionTime!) - Date.parse(run.status!.startTime!);
      assert.ok(ran >= 3000 && ran <= 4000, `the second attempt ran ${ran} ms`);

      await waitFor(() => (rec.states.get(name)?.at(-1)?.status ?? "") === "True");
      assertNoEarlyEnd(rec.states.get(name)!, "True", 1);
      const runController = scn.services.find((s) => s.name === "run-controller")!;
      assert.equal(await enforcementCount(runController, TIMED_OUT[flavour], flavour), 0);
    } finally {
      rec.stop();
    }
  });
}

async function waitFor(check: () => boolean) {
  for (let i = 0; i < 50 && !check(); i++) await new Promise((r) => setTimeout(r, 100));
}
