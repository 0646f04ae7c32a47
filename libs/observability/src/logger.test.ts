import assert from "node:assert/strict";
import { afterEach, test } from "node:test";
import { createLogger } from "./logger.ts";

function capture(): { lines: Record<string, unknown>[]; write(msg: string): void } {
  const lines: Record<string, unknown>[] = [];
  return { lines, write: (msg) => lines.push(JSON.parse(msg)) };
}

const savedLevel = process.env.LOG_LEVEL;
afterEach(() => {
  if (savedLevel === undefined) delete process.env.LOG_LEVEL;
  else process.env.LOG_LEVEL = savedLevel;
});

test("writes JSON with service, ISO time, level label and child bindings", () => {
  delete process.env.LOG_LEVEL;
  const out = capture();
  const log = createLogger({ service: "git-resolver", destination: out });
  log.child({ controller: "resolution", key: "ns/req" }).info({ attempt: 2 }, "resolved");
  log.debug("hidden at info");

  assert.equal(out.lines.length, 1);
  const line = out.lines[0]!;
  assert.equal(line.service, "git-resolver");
  assert.equal(line.level, "info");
  assert.equal(line.msg, "resolved");
  assert.equal(line.controller, "resolution");
  assert.equal(line.key, "ns/req");
  assert.equal(line.attempt, 2);
  assert.match(String(line.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.equal("trace_id" in line, false, "no trace fields outside a span");
});

test("takes the level from LOG_LEVEL, an explicit level wins", () => {
  process.env.LOG_LEVEL = "debug";
  assert.equal(createLogger({ service: "s", destination: capture() }).level, "debug");
  assert.equal(createLogger({ service: "s", level: "warn", destination: capture() }).level, "warn");
});

test("an unknown level falls back to info with a warning", () => {
  const out = capture();
  const log = createLogger({ service: "s", level: "verbose", destination: out });
  assert.equal(log.level, "info");
  assert.equal(out.lines[0]?.level, "warn");
  assert.equal(out.lines[0]?.requested, "verbose");
});
