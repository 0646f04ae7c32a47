import assert from "node:assert/strict";
import { test } from "node:test";
import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { OutageReportingExporter } from "./outage-reporting-exporter.ts";

/** An exporter whose next results are scripted; throws when told to. */
function scripted(results: (ExportResult | "throw")[]): SpanExporter & { calls: number } {
  const exporter = {
    calls: 0,
    export(_spans: ReadableSpan[], done: (r: ExportResult) => void) {
      const next = results[exporter.calls++] ?? { code: ExportResultCode.SUCCESS };
      if (next === "throw") throw new Error("exporter blew up");
      done(next);
    },
    shutdown: () => Promise.resolve(),
  };
  return exporter;
}

function recorder() {
  const lines: { level: string; fields: Record<string, unknown>; msg: string }[] = [];
  return {
    lines,
    warn: (fields: Record<string, unknown>, msg: string) => lines.push({ level: "warn", fields, msg }),
    info: (fields: Record<string, unknown>, msg: string) => lines.push({ level: "info", fields, msg }),
  };
}

const refused = { code: ExportResultCode.FAILED, error: new Error("connect ECONNREFUSED 127.0.0.1:9") };
const ok = { code: ExportResultCode.SUCCESS };
const spans = (n: number) => Array.from({ length: n }, () => ({}) as ReadableSpan);

function exportAll(exporter: SpanExporter, batches: number[]): ExportResult[] {
  const results: ExportResult[] = [];
  for (const n of batches) exporter.export(spans(n), (r) => results.push(r));
  return results;
}

test("an outage is logged once however many batches fail, and the recovery once with the count", () => {
  const log = recorder();
  const inner = scripted([refused, refused, refused, "throw", ok, ok]);
  const exporter = new OutageReportingExporter(inner, { url: "http://c:4318/v1/traces", log: log as never });

  const results = exportAll(exporter, [2, 3, 4, 5]);
  assert.equal(log.lines.length, 1);
  assert.equal(log.lines[0]?.level, "warn");
  assert.match(log.lines[0]?.msg ?? "", /cannot export spans/);
  assert.equal(log.lines[0]?.fields.url, "http://c:4318/v1/traces");
  assert.equal((log.lines[0]?.fields.err as Error | undefined)?.message, "connect ECONNREFUSED 127.0.0.1:9");
  assert.equal(exporter.failing, true);
  // the processor is told every batch is done: nothing more for it to report or retry
  assert.deepEqual(
    results.map((r) => r.code),
    [ExportResultCode.SUCCESS, ExportResultCode.SUCCESS, ExportResultCode.SUCCESS, ExportResultCode.SUCCESS],
  );

  exportAll(exporter, [1, 1]);
  assert.equal(log.lines.length, 2, "one line for the recovery, none for the next success");
  assert.equal(log.lines[1]?.level, "info");
  assert.equal(log.lines[1]?.fields.droppedSpans, 14);
  assert.equal(exporter.failing, false);
});

test("a second outage is logged again", () => {
  const log = recorder();
  const exporter = new OutageReportingExporter(scripted([refused, ok, refused, refused]), {
    url: "u",
    log: log as never,
  });
  exportAll(exporter, [1, 1, 1, 1]);
  assert.deepEqual(
    log.lines.map((l) => l.level),
    ["warn", "info", "warn"],
  );
});

test("successes alone log nothing", () => {
  const log = recorder();
  exportAll(new OutageReportingExporter(scripted([]), { url: "u", log: log as never }), [1, 2, 3]);
  assert.equal(log.lines.length, 0);
});
