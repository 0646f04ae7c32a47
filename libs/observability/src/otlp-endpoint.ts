// Whether spans leave the process, and where to: the OTLP endpoint variables as the OTLP/HTTP
// exporter reads them (it reads them again itself, with headers, timeout, compression and TLS).
type Env = Record<string, string | undefined>;

/**
 * The traces URL the exporter will post to, or undefined when no endpoint is set. The
 * signal-specific variable is used as written; the generic one gets `/v1/traces` appended.
 */
export function otlpTracesUrl(env: Env): string | undefined {
  const specific = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (specific) return specific;
  const generic = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!generic) return undefined;
  return `${generic.endsWith("/") ? generic : `${generic}/`}v1/traces`;
}
