// A span exporter that tells the operator once when the trace collector cannot be reached and
// once when it answers again, instead of a line per failed batch. Spans of a failed batch are
// dropped: tracing must never slow down or fail the resolution it describes.
import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { Logger } from "pino";

export interface OutageReportingExporterOptions {
  /** Where the spans go, named in the log lines. */
  url: string;
  log: Pick<Logger, "warn" | "info">;
}

export class OutageReportingExporter implements SpanExporter {
  private readonly inner: SpanExporter;
  private readonly options: OutageReportingExporterOptions;
  /** Spans dropped since the current outage began; undefined while exports succeed. */
  private droppedInOutage: number | undefined;

  constructor(inner: SpanExporter, options: OutageReportingExporterOptions) {
    this.inner = inner;
    this.options = options;
  }

  /** Whether the last export failed (the collector is considered unreachable). */
  get failing(): boolean {
    return this.droppedInOutage !== undefined;
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    const done = (result: ExportResult) => {
      if (result.code === ExportResultCode.SUCCESS) this.succeeded();
      else this.failed(spans.length, result.error);
      // Reported here, once per outage; the processor would hand every failed batch to the
      // global error handler, and it has nothing else to do with them (they are dropped).
      resultCallback({ code: ExportResultCode.SUCCESS });
    };
    try {
      this.inner.export(spans, done);
    } catch (err) {
      done({ code: ExportResultCode.FAILED, error: err instanceof Error ? err : new Error(String(err)) });
    }
  }

  private failed(spans: number, error: Error | undefined): void {
    if (this.droppedInOutage !== undefined) {
      this.droppedInOutage += spans;
      return;
    }
    this.droppedInOutage = spans;
    this.options.log.warn(
      { url: this.options.url, err: error },
      "cannot export spans to the trace collector: dropping spans until it answers (logged once per outage)",
    );
  }

  private succeeded(): void {
    if (this.droppedInOutage === undefined) return;
    this.options.log.info(
      { url: this.options.url, droppedSpans: this.droppedInOutage },
      "trace collector answers again: exporting spans",
    );
    this.droppedInOutage = undefined;
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}
