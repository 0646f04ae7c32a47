// Says what the Pipe run's Secrets hold without showing what they hold: a
// Secret's name, type, owner and keys with byte sizes, and the certificate's
// public facts (subject, validity, that the key is its key), checked in the
// demo's own process. The PEM text and the base64 of `data` never reach a
// string these functions return.
import { createPrivateKey, X509Certificate } from "node:crypto";
import type { OwnerReference } from "@quarry/api";
import type { KubeObject } from "@quarry/kube";

export interface SecretObject extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

/** `Secret ns/name  type Opaque  keys tls.key (1704 bytes)  owned by CustomRun make-cert`. */
export function secretSummary(secret: SecretObject): string {
  const { namespace, name, ownerReferences } = secret.metadata;
  const keys = Object.entries(secret.data ?? {}).map(
    ([key, b64]) => `${key} (${Buffer.from(b64, "base64").length} bytes)`,
  );
  const owner = controllerOf(ownerReferences);
  return [
    `Secret ${namespace}/${name}`,
    `type ${secret.type ?? "Opaque"}`,
    `keys ${keys.length ? keys.join(", ") : "<none>"}`,
    ...(owner ? [`owned by ${owner.kind} ${owner.name}`] : []),
  ].join("  ");
}

function controllerOf(refs: readonly OwnerReference[] | undefined): OwnerReference | undefined {
  return refs?.find((r) => r.controller) ?? refs?.[0];
}

/** One data key's bytes; throws naming the key (never a value) when it is missing. */
export function secretBytes(secret: SecretObject, key: string): Buffer {
  const b64 = secret.data?.[key];
  if (b64 === undefined)
    throw new Error(
      `Secret ${secret.metadata.name} has no key ${key} (it has ${Object.keys(secret.data ?? {}).join(", ") || "none"})`,
    );
  return Buffer.from(b64, "base64");
}

/**
 * `CN=x, valid <from> to <to>, rsa 2048-bit key; the key is the certificate's`.
 * Throws when the pair does not parse or the key is not the certificate's, so
 * the demo fails instead of printing a pair that would not serve TLS.
 */
export function certificateFacts(certPem: Buffer, keyPem: Buffer): string {
  const cert = new X509Certificate(certPem);
  const key = createPrivateKey(keyPem);
  if (!cert.checkPrivateKey(key)) throw new Error(`the private key is not the key of ${cert.subject}`);
  const bits = key.asymmetricKeyDetails?.modulusLength;
  return [
    cert.subject.replaceAll("\n", ", "),
    `valid ${cert.validFrom} to ${cert.validTo}`,
    `${key.asymmetricKeyType ?? "?"}${bits ? ` ${bits}-bit` : ""} key; the key is the certificate's`,
  ].join(", ");
}
