// The conversion webhook's settings, from the environment the chart sets (README: Conversion
// webhook). Off unless QUARRY_CONVERSION_WEBHOOK=on; a bad value stops the process at start.
import { ConfigError, parseDuration } from "@quarry/kube";

export const DEFAULT_WEBHOOK_SECRET = "quarry-lifecycle-controller-webhook-tls";
export const DEFAULT_WEBHOOK_CRD = "resolutionrequests.resolution.tekton.dev";
export const DEFAULT_CERT_DIR = "/var/run/quarry/webhook-tls";

export interface WebhookSettings {
  port: number;
  host: string;
  /** self-issued: a CA and serving certificate kept in a Secret, the CA injected; files: cert-manager's, mounted. */
  certs: "self-issued" | "files";
  secretName: string;
  certDir: string;
  /** SANs of the serving certificate: DNS names, or IP addresses. */
  hosts: string[];
  /** The CRD whose caBundle is injected (self-issued only); undefined: none. */
  crdName: string | undefined;
  /** How often the certificates are re-read (and renewed when due). */
  resyncMs: number;
}

export function webhookSettingsFromEnv(
  env: NodeJS.ProcessEnv,
  systemNamespace: string,
): WebhookSettings | undefined {
  const enabled = env.QUARRY_CONVERSION_WEBHOOK ?? "off";
  if (enabled === "off") return undefined;
  if (enabled !== "on")
    throw new ConfigError("QUARRY_CONVERSION_WEBHOOK", `must be on or off, got "${enabled}"`);
  const port = Number(env.QUARRY_CONVERSION_WEBHOOK_PORT ?? 9443);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(
      "QUARRY_CONVERSION_WEBHOOK_PORT",
      `not a port: "${env.QUARRY_CONVERSION_WEBHOOK_PORT}"`,
    );
  const certs = env.QUARRY_CONVERSION_WEBHOOK_CERTS ?? "self-issued";
  if (certs !== "self-issued" && certs !== "files")
    throw new ConfigError("QUARRY_CONVERSION_WEBHOOK_CERTS", `must be self-issued or files, got "${certs}"`);
  const service = env.QUARRY_CONVERSION_WEBHOOK_SERVICE || "quarry-lifecycle-controller-webhook";
  const hosts = (env.QUARRY_CONVERSION_WEBHOOK_HOSTS ?? "")
    .split(",")
    .map((h) => h.trim())
    .filter((h) => h !== "");
  let resyncMs: number;
  try {
    resyncMs = parseDuration(env.QUARRY_CONVERSION_WEBHOOK_RESYNC || "1m");
  } catch (err) {
    throw new ConfigError("QUARRY_CONVERSION_WEBHOOK_RESYNC", (err as Error).message);
  }
  if (resyncMs <= 0) throw new ConfigError("QUARRY_CONVERSION_WEBHOOK_RESYNC", "must be positive");
  const crd = env.QUARRY_CONVERSION_WEBHOOK_CRD ?? DEFAULT_WEBHOOK_CRD;
  return {
    port,
    host: env.QUARRY_CONVERSION_WEBHOOK_HOST || "0.0.0.0",
    certs,
    secretName: env.QUARRY_CONVERSION_WEBHOOK_SECRET || DEFAULT_WEBHOOK_SECRET,
    certDir: env.QUARRY_CONVERSION_WEBHOOK_CERT_DIR || DEFAULT_CERT_DIR,
    // the names the apiserver dials a Service by, unless the chart lists them
    hosts: hosts.length > 0 ? hosts : serviceHosts(service, systemNamespace),
    crdName: certs === "self-issued" && crd !== "" ? crd : undefined,
    resyncMs,
  };
}

export function serviceHosts(service: string, namespace: string): string[] {
  return [
    service,
    `${service}.${namespace}`,
    `${service}.${namespace}.svc`,
    `${service}.${namespace}.svc.cluster.local`,
  ];
}
