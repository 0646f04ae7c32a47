import assert from "node:assert/strict";
import { test } from "node:test";
import { createLogger } from "./logger.ts";
import { onShutdown } from "./shutdown.ts";

const log = createLogger({ service: "s", destination: { write: () => {} } });

/** Installs the handler with a recording exit; resolves with the first exit code. */
function install(fn: (signal: NodeJS.Signals) => Promise<void>, timeoutMs = 1000) {
  const codes: number[] = [];
  let resolveExit: (code: number) => void = () => {};
  const exited = new Promise<number>((r) => {
    resolveExit = r;
  });
  const remove = onShutdown(log, fn, {
    timeoutMs,
    exit: (code) => {
      codes.push(code);
      resolveExit(code);
    },
  });
  return { codes, exited, remove };
}

test("runs the drain once and exits 0", async () => {
  const signals: string[] = [];
  const h = install(async (signal) => {
    signals.push(signal);
  });
  process.emit("SIGTERM", "SIGTERM");
  assert.equal(await h.exited, 0);
  h.remove();
  assert.deepEqual(signals, ["SIGTERM"]);
});

test("exits 1 when the drain outlives the timeout", async () => {
  let release: () => void = () => {};
  const h = install(() => new Promise<void>((r) => (release = r)), 20);
  process.emit("SIGINT", "SIGINT");
  assert.equal(await h.exited, 1);
  release();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(h.codes, [1]);
  h.remove();
});

test("exits 1 when the drain fails", async () => {
  const h = install(async () => {
    throw new Error("drain failed");
  });
  process.emit("SIGTERM", "SIGTERM");
  assert.equal(await h.exited, 1);
  h.remove();
});

test("a second signal exits 1 at once", async () => {
  let release: () => void = () => {};
  let calls = 0;
  const h = install(() => {
    calls++;
    return new Promise<void>((r) => (release = r));
  });
  process.emit("SIGTERM", "SIGTERM");
  process.emit("SIGTERM", "SIGTERM");
  assert.equal(await h.exited, 1);
  assert.equal(calls, 1);
  h.remove();
  release();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(h.codes, [1], "the drain finishing later does not exit again");
});
