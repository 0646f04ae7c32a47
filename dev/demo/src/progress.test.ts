import assert from "node:assert/strict";
import { test } from "node:test";
import { Narrator } from "./narrator.ts";
import {
  nextPlainLineAt,
  PLAIN_EVERY_MS,
  PROGRESS_AFTER_MS,
  Progress,
  SPINNER,
  spinnerLine,
  waitingLine,
} from "./progress.ts";

/** A Progress on a fake clock; update() is called by hand instead of by its timer. */
function fake(tty: boolean) {
  let now = 0;
  const raw: string[] = [];
  const lines: string[] = [];
  const progress = new Progress({
    write: (s) => raw.push(s),
    line: (s) => lines.push(s),
    tty,
    now: () => now,
  });
  return {
    progress,
    raw,
    lines,
    at(ms: number) {
      now = ms;
      progress.update();
    },
  };
}

test("progress lines say what is awaited and the whole seconds so far", () => {
  assert.equal(waitingLine("the control plane", 11_900), "waiting for the control plane (11s)");
  assert.equal(
    spinnerLine("the control plane", 3_400, 0),
    `${SPINNER[0]} waiting for the control plane (3s)`,
  );
  assert.equal(spinnerLine("x", 1_000, SPINNER.length + 1), `${SPINNER[1]} waiting for x (1s)`);
});

test("without a terminal: nothing in the first second, then a line at 1s and every 10s after, never more", async () => {
  const f = fake(false);
  let finish!: () => void;
  const work = f.progress.track("the fleet", new Promise<void>((r) => (finish = r)));
  for (let ms = 0; ms < PROGRESS_AFTER_MS; ms += 250) f.at(ms);
  assert.deepEqual(f.lines, []);
  // a poll every 250 ms for 25 s prints three lines
  for (let ms = PROGRESS_AFTER_MS; ms <= 25_000; ms += 250) f.at(ms);
  assert.deepEqual(f.lines, [
    "  waiting for the fleet (1s)",
    "  waiting for the fleet (11s)",
    "  waiting for the fleet (21s)",
  ]);
  assert.deepEqual(f.raw, [], "no spinner without a terminal");
  assert.equal(nextPlainLineAt(3), PROGRESS_AFTER_MS + 3 * PLAIN_EVERY_MS);
  finish();
  await work;
});

test("on a terminal: a spinner redrawn in place after the first second, erased when the wait ends", async () => {
  const f = fake(true);
  let finish!: (v: string) => void;
  const work = f.progress.track("the node", new Promise<string>((r) => (finish = r)));
  f.at(500);
  assert.deepEqual(f.raw, []);
  f.at(1_200);
  f.at(2_300);
  assert.deepEqual(f.raw, [
    `\r\x1b[K${SPINNER[0]} waiting for the node (1s)`,
    `\r\x1b[K${SPINNER[1]} waiting for the node (2s)`,
  ]);
  assert.deepEqual(f.lines, [], "a terminal gets no waiting lines");
  finish("ready");
  assert.equal(await work, "ready");
  assert.equal(f.raw.at(-1), "\r\x1b[K", "the spinner line is erased");
});

test("nested waits show the newest; a failed wait still ends its progress", async () => {
  const f = fake(false);
  let finishOuter!: () => void;
  const outer = f.progress.track("story (10)", new Promise<void>((r) => (finishOuter = r)));
  let failInner!: (e: Error) => void;
  const inner = f.progress.track("timeout of nonesuch-task", new Promise<void>((_, j) => (failInner = j)));
  f.at(1_000);
  failInner(new Error("boom"));
  await assert.rejects(inner, /boom/);
  f.at(1_500);
  assert.deepEqual(f.lines, ["  waiting for timeout of nonesuch-task (1s)", "  waiting for story (10) (1s)"]);
  finishOuter();
  await outer;
});

test("the narrator reports a step's time and records its row, a failed step included", async () => {
  let now = 0;
  const out: string[] = [];
  const n = new Narrator({ write: (s) => out.push(s), tty: true, now: () => now });
  const value = await n.step(
    "starting the embedded control plane (etcd + kube-apiserver)",
    async () => {
      now = 2_500;
      return "up";
    },
    (v) => `control plane ${v}`,
    "the embedded control plane",
  );
  assert.equal(value, "up");
  await assert.rejects(
    n.record(
      "(1)",
      "a Task from git",
      async () => {
        now = 3_000;
        throw new Error("git-hello: no outcome within 15s\nat …");
      },
      () => ({ outcome: "Succeeded", reason: "" }),
    ),
  );
  assert.deepEqual(n.rows, [
    {
      step: "setup",
      asked: "the embedded control plane",
      outcome: "done",
      reason: "",
      durationMs: 2_500,
    },
    {
      step: "(1)",
      asked: "a Task from git",
      outcome: "failed",
      reason: "git-hello: no outcome within 15s",
      durationMs: 500,
    },
  ]);
  assert.deepEqual(out, [
    "[  0.0s] starting the embedded control plane (etcd + kube-apiserver) ...\n",
    "[  2.5s]   control plane up (2.5s)\n",
  ]);
});
