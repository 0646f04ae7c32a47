import assert from "node:assert/strict";
import { test } from "node:test";
import { RateLimitedDiagLogger } from "./diag-logger.ts";

function setup() {
  const lines: { level: string; fields: Record<string, unknown>; msg: string }[] = [];
  let now = 0;
  const diag = new RateLimitedDiagLogger({
    intervalMs: 60_000,
    now: () => now,
    log: {
      warn: ((fields: Record<string, unknown>, msg: string) =>
        lines.push({ level: "warn", fields, msg })) as never,
      error: ((fields: Record<string, unknown>, msg: string) =>
        lines.push({ level: "error", fields, msg })) as never,
    },
  });
  return { diag, lines, advance: (ms: number) => (now += ms) };
}

test("one line per kind per interval; numbers do not make a new kind", () => {
  const { diag, lines, advance } = setup();
  diag.warn("Dropped 12 spans because maxQueueSize reached");
  diag.warn("Dropped 40 spans because maxQueueSize reached");
  advance(59_000);
  diag.warn("Dropped 7 spans because maxQueueSize reached");
  assert.equal(lines.length, 1);
  advance(2_000);
  diag.warn("Dropped 9 spans because maxQueueSize reached");
  assert.equal(lines.length, 2);
  assert.equal(lines[1]?.fields.suppressedSinceLast, 2, "the held-back lines are counted");
  assert.equal(lines[1]?.fields.component, "opentelemetry");
});

test("different messages and levels are separate kinds; details are kept", () => {
  const { diag, lines } = setup();
  diag.warn('Header "x" has invalid value (y) and will be ignored');
  diag.error('OTEL_TRACES_SAMPLER value "bogus" invalid', new Error("why"));
  diag.warn("something else");
  assert.deepEqual(
    lines.map((l) => l.level),
    ["warn", "error", "warn"],
  );
  assert.deepEqual(lines[1]?.fields.details, ["why"]);
});
