// Public keys of a verification policy's authorities and the signatures they
// check, as Tekton's trusted resources (sigstore's verifiers) check them: the
// first PEM block of a key, `PUBLIC KEY` (ECDSA, RSA, Ed25519) or `RSA PUBLIC
// KEY`; ECDSA and RSA verify the policy's hash of the message (ECDSA in ASN.1
// DER or IEEE P1363 form, RSA PKCS #1 v1.5), Ed25519 the message itself.
import { createPublicKey, constants as cryptoConstants, type KeyObject, verify } from "node:crypto";

export const HASH_ALGORITHMS = ["sha224", "sha256", "sha384", "sha512"] as const;
export type HashAlgorithm = (typeof HASH_ALGORITHMS)[number];

/** Largest key accepted, PEM included: an RSA-16384 public key is under 3 KiB. */
export const MAX_KEY_BYTES = 16 * 1024;
/** Largest signature accepted, decoded: RSA-16384 signs in 2 KiB, ECDSA P-521 in 139 bytes. */
export const MAX_SIGNATURE_BYTES = 4 * 1024;

export interface VerificationKey {
  readonly type: "ecdsa" | "rsa" | "ed25519";
  readonly key: KeyObject;
  readonly hash: HashAlgorithm;
}

export type LoadedKey = { ok: true; key: VerificationKey } | { ok: false; message: string };

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/;

/** The first PEM block of `pem` as a key verifying with `hash` (a policy's hashAlgorithm, lower-cased). */
export function loadPublicKey(pem: string, hash: string): LoadedKey {
  const algorithm = hash.trim().toLowerCase() || "sha256";
  if (!(HASH_ALGORITHMS as readonly string[]).includes(algorithm))
    return { ok: false, message: `unknown hash algorithm "${hash}" (${HASH_ALGORITHMS.join(", ")})` };
  if (Buffer.byteLength(pem) > MAX_KEY_BYTES)
    return { ok: false, message: `the key is ${Buffer.byteLength(pem)} bytes, over ${MAX_KEY_BYTES}` };
  const block = PEM_BLOCK.exec(pem);
  if (!block) return { ok: false, message: "the key is not PEM" };
  const kind = block[1];
  if (kind !== "PUBLIC KEY" && kind !== "RSA PUBLIC KEY")
    return {
      ok: false,
      message: `the key's PEM block is "${kind}", expected "PUBLIC KEY" or "RSA PUBLIC KEY"`,
    };
  let key: KeyObject;
  try {
    key = createPublicKey(block[0]);
  } catch (err) {
    return { ok: false, message: `the key cannot be read: ${(err as Error).message}` };
  }
  const type = key.asymmetricKeyType;
  if (type !== "ec" && type !== "rsa" && type !== "ed25519")
    return {
      ok: false,
      message: `the key is ${type ?? "of no known type"}; ECDSA, RSA and Ed25519 keys are supported`,
    };
  if (type === "rsa" && algorithm === "sha224")
    return { ok: false, message: "RSA keys verify with sha256, sha384 or sha512, not sha224" };
  return {
    ok: true,
    key: { type: type === "ec" ? "ecdsa" : type, key, hash: algorithm as HashAlgorithm },
  };
}

/** Whether `signature` is `key`'s over `message` (for Tekton objects: the SHA-256 checksum of the object). */
export function verifySignature(key: VerificationKey, message: Uint8Array, signature: Uint8Array): boolean {
  if (signature.byteLength === 0 || signature.byteLength > MAX_SIGNATURE_BYTES) return false;
  try {
    switch (key.type) {
      case "ed25519":
        return verify(null, message, key.key, signature);
      case "rsa":
        return verify(
          key.hash,
          message,
          { key: key.key, padding: cryptoConstants.RSA_PKCS1_PADDING },
          signature,
        );
      case "ecdsa":
        return (
          verify(key.hash, message, { key: key.key, dsaEncoding: "der" }, signature) ||
          // sigstore also takes r||s (IEEE P1363) when the bytes are not DER
          (signature.byteLength % 2 === 0 &&
            verify(key.hash, message, { key: key.key, dsaEncoding: "ieee-p1363" }, signature))
        );
    }
  } catch {
    // a malformed signature (bad DER, wrong length) is a signature that does not verify
    return false;
  }
}
