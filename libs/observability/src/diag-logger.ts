// The OpenTelemetry SDK's own warnings (a malformed OTEL_* variable, a full span queue) routed
// into the service's JSON log, each kind at most once per interval: the SDK repeats some of them
// for every batch, and a log storm about tracing is worse than the tracing problem.
import type { DiagLogger } from "@opentelemetry/api";
import type { Logger } from "pino";

export interface RateLimitedDiagLoggerOptions {
  log: Pick<Logger, "warn" | "error">;
  /** The shortest time between two lines of one kind. */
  intervalMs: number;
  now?: () => number;
}

/** A diag logger for DiagLogLevel.WARN: warn and error lines reach the log, rate-limited per kind. */
export class RateLimitedDiagLogger implements DiagLogger {
  private readonly options: RateLimitedDiagLoggerOptions;
  /** Per kind: when its last line was written and how many were held back since. */
  private readonly seen = new Map<string, { at: number; suppressed: number }>();

  constructor(options: RateLimitedDiagLoggerOptions) {
    this.options = options;
  }

  error(message: string, ...args: unknown[]): void {
    this.write("error", message, args);
  }

  warn(message: string, ...args: unknown[]): void {
    this.write("warn", message, args);
  }

  // below WARN nothing is registered to reach us; the methods exist for the interface
  info(): void {}
  debug(): void {}
  verbose(): void {}

  private write(level: "warn" | "error", message: string, args: unknown[]): void {
    const now = (this.options.now ?? Date.now)();
    // "Dropped 12 spans" and "Dropped 40 spans" are one kind of line
    const kind = `${level}:${message.replace(/\d+/g, "N")}`;
    const last = this.seen.get(kind);
    if (last && now - last.at < this.options.intervalMs) {
      last.suppressed++;
      return;
    }
    this.seen.set(kind, { at: now, suppressed: 0 });
    const fields: Record<string, unknown> = { component: "opentelemetry" };
    if (args.length) fields.details = args.map((a) => (a instanceof Error ? a.message : a));
    if (last?.suppressed) fields.suppressedSinceLast = last.suppressed;
    this.options.log[level](fields, message);
  }
}
