// The CLI as a traced requester: with an OTLP endpoint in the environment (the standard
// OTEL_EXPORTER_OTLP_* variables) a command runs in a root span exported as service
// "quarry-cli", and the requests it creates carry that trace to the services that resolve them.
// Without one nothing is set up and nothing is stamped, as before.
import {
  type Attributes,
  createLogger,
  otlpTracesUrl,
  ROOT_CONTEXT,
  setupTracing,
  withSpan,
} from "@quarry/observability";

export const CLI_SERVICE_NAME = "quarry-cli";

export async function traced<T>(name: string, attributes: Attributes, fn: () => Promise<T>): Promise<T> {
  if (!otlpTracesUrl(process.env)) return fn();
  // stdout is the command's output; only the exporter's warnings, on stderr
  const log = createLogger({
    service: CLI_SERVICE_NAME,
    level: "warn",
    destination: { write: (line: string) => process.stderr.write(line) },
  });
  const tracing = setupTracing(CLI_SERVICE_NAME, { log, flushTimeoutMs: 3_000 });
  try {
    return await withSpan(name, ROOT_CONTEXT, attributes, fn);
  } finally {
    await tracing.shutdown();
  }
}
