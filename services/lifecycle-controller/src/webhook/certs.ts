// When the self-issued webhook certificates are renewed, decided from the material and the time
// alone (decideCertificates, table-tested with any clock), and the renewal itself (renewCertificates).
// A one-year CA and a 90-day serving certificate, each renewed at two thirds of its life; a new CA
// joins the bundle beside the old one, which stays until it expires, so a serving certificate
// signed by either verifies while replicas and the apiserver catch up.
import {
  type CertAndKey,
  certFacts,
  issueCa,
  issueServingCert,
  keyMatches,
  signedBy,
  splitPem,
} from "./pki.ts";

const DAY_MS = 24 * 3600 * 1000;

export interface RotationPolicy {
  caLifetimeMs: number;
  leafLifetimeMs: number;
  /** Fraction of its life after which a certificate is renewed. */
  renewAt: number;
}

export const DEFAULT_ROTATION: RotationPolicy = {
  caLifetimeMs: 365 * DAY_MS,
  leafLifetimeMs: 90 * DAY_MS,
  renewAt: 2 / 3,
};

/** Clock skew allowance: certificates are valid from a little before they were made. */
const BACKDATE_MS = 5 * 60 * 1000;

/** What the Secret holds (its keys in secret.ts). */
export interface WebhookCerts {
  ca: CertAndKey;
  serving: CertAndKey;
  /** PEM of every CA the apiserver should trust: the current one first, then older ones until they expire. */
  caBundle: string;
}

export type CertDecision =
  | { action: "keep" }
  | { action: "issue"; reason: string }
  | { action: "rotate-ca"; reason: string }
  | { action: "renew-serving"; reason: string };

export function decideCertificates(
  current: WebhookCerts | undefined,
  hosts: readonly string[],
  now: Date,
  policy: RotationPolicy = DEFAULT_ROTATION,
): CertDecision {
  if (!current) return { action: "issue", reason: "no certificates yet" };
  const ca = certFacts(current.ca.certPem);
  if (!ca?.isCa || !keyMatches(current.ca.certPem, current.ca.keyPem))
    return { action: "issue", reason: "the CA certificate or key is unreadable" };
  if (now >= ca.notAfter)
    return { action: "issue", reason: `the CA expired at ${ca.notAfter.toISOString()}` };
  if (now >= renewalTime(ca, policy))
    return { action: "rotate-ca", reason: `the CA expires at ${ca.notAfter.toISOString()}` };
  const leaf = certFacts(current.serving.certPem);
  if (!leaf || !keyMatches(current.serving.certPem, current.serving.keyPem))
    return { action: "renew-serving", reason: "the serving certificate or key is unreadable" };
  if (!signedBy(current.serving.certPem, current.ca.certPem))
    return { action: "renew-serving", reason: "the serving certificate is not signed by the current CA" };
  const missing = hosts.filter((h) => !leaf.hosts.includes(h));
  if (missing.length > 0)
    return { action: "renew-serving", reason: `the serving certificate does not name ${missing.join(", ")}` };
  if (now >= renewalTime(leaf, policy))
    return {
      action: "renew-serving",
      reason: `the serving certificate expires at ${leaf.notAfter.toISOString()}`,
    };
  return { action: "keep" };
}

/** The certificates to hold after `decision`; `current` itself when nothing changes. */
export async function renewCertificates(
  current: WebhookCerts | undefined,
  decision: CertDecision,
  hosts: readonly string[],
  now: Date,
  policy: RotationPolicy = DEFAULT_ROTATION,
): Promise<WebhookCerts> {
  const notBefore = new Date(now.getTime() - BACKDATE_MS);
  let ca = current?.ca;
  let older = current ? splitPem(current.caBundle) : [];
  if (decision.action === "issue") older = [];
  if (decision.action === "issue" || decision.action === "rotate-ca" || !ca) {
    ca = await issueCa(`quarry-lifecycle-controller-webhook-ca@${Math.floor(now.getTime() / 1000)}`, {
      notBefore,
      notAfter: new Date(now.getTime() + policy.caLifetimeMs),
    });
  }
  const caBundle = bundle([ca.certPem, ...older], now);
  if (decision.action === "keep" && current) return { ...current, caBundle };
  // a serving certificate never outlives the CA that signed it
  const caNotAfter = certFacts(ca.certPem)?.notAfter ?? now;
  const notAfter = new Date(Math.min(now.getTime() + policy.leafLifetimeMs, caNotAfter.getTime()));
  const serving = await issueServingCert(ca, [...hosts], { notBefore, notAfter });
  return { ca, serving, caBundle };
}

/** `pems` without duplicates or expired certificates, in order, as one PEM bundle. */
export function bundle(pems: readonly string[], now: Date): string {
  const seen = new Set<string>();
  const kept: string[] = [];
  for (const pem of pems) {
    const facts = certFacts(pem);
    if (!facts || now >= facts.notAfter || seen.has(facts.fingerprint)) continue;
    seen.add(facts.fingerprint);
    kept.push(pem.endsWith("\n") ? pem : `${pem}\n`);
  }
  return kept.join("");
}

function renewalTime(cert: { notBefore: Date; notAfter: Date }, policy: RotationPolicy): Date {
  const life = cert.notAfter.getTime() - cert.notBefore.getTime();
  return new Date(cert.notBefore.getTime() + life * policy.renewAt);
}
