// Digests of what a pipe stored. A ConfigMap's is the SHA-256 of its file
// (whoever may read the status may usually read the ConfigMap too). A
// Secret's is an HMAC-SHA256 under a key of this installation: a plain hash
// of a short secret (a PIN, a generated password of a few words) in a
// request's status or receipt would let anyone who reads them test guesses
// offline. The receipt still needs a digest per Secret (to tell a Secret
// stored from another run of the pod), so the digest is keyed, not dropped.
//
// The key lives in Secret `pipe-resolver-digest-key` in the resolver's own
// namespace: read by name (the only Secret the resolver may get), made by the
// first replica that needs it (32 random bytes; a replica that loses the
// race reads the winner's). Deleting it rotates the key; requests already
// resolved keep their status, and one that was storing at that moment fails
// OutputConflict on its next step rather than mix two runs' outputs.
import { createHash, createHmac, randomBytes } from "node:crypto";
import { LABEL_MANAGED_BY, MANAGED_BY_QUARRY } from "@quarry/api";
import { isApiError, type KubeClient, type KubeObject, secrets } from "@quarry/kube";

export const DIGEST_KEY_SECRET = "pipe-resolver-digest-key";
/** The Secret's data key holding the key bytes. */
export const DIGEST_KEY_FIELD = "key";
export const MIN_DIGEST_KEY_BYTES = 32;

/** The installation's key (cached after the first read). */
export type DigestKeySource = (signal: AbortSignal) => Promise<Uint8Array>;

export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

export function hmacSha256Hex(key: Uint8Array, bytes: Uint8Array): string {
  return createHmac("sha256", key).update(bytes).digest("hex");
}

type SecretObject = KubeObject & { data?: Record<string, string>; type?: string };

function keyOf(secret: SecretObject, namespace: string): Uint8Array {
  const key = Buffer.from(secret.data?.[DIGEST_KEY_FIELD] ?? "", "base64");
  if (key.length < MIN_DIGEST_KEY_BYTES)
    throw new Error(
      `Secret ${namespace}/${DIGEST_KEY_SECRET} has no data key "${DIGEST_KEY_FIELD}" of at least ${MIN_DIGEST_KEY_BYTES} bytes: delete it and the pipe resolver makes a new one`,
    );
  return key;
}

async function loadOrCreate(client: KubeClient, namespace: string, signal: AbortSignal): Promise<Uint8Array> {
  const rbac = (verb: string) =>
    new Error(
      `the pipe resolver may not ${verb} Secret ${namespace}/${DIGEST_KEY_SECRET}, the key of its Secret outputs' digests (charts/pipe-resolver/rbac.yaml, namespaceRules)`,
    );
  const read = async () => {
    try {
      return keyOf(await client.get<SecretObject>(secrets, namespace, DIGEST_KEY_SECRET, signal), namespace);
    } catch (err) {
      if (isApiError(err, 403)) throw rbac("get");
      throw err;
    }
  };
  try {
    return await read();
  } catch (err) {
    if (!isApiError(err, 404)) throw err;
  }
  try {
    const made = await client.create<SecretObject>(secrets, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: DIGEST_KEY_SECRET,
        namespace,
        labels: { [LABEL_MANAGED_BY]: MANAGED_BY_QUARRY },
      },
      type: "Opaque",
      data: { [DIGEST_KEY_FIELD]: randomBytes(MIN_DIGEST_KEY_BYTES).toString("base64") },
    } as SecretObject);
    return keyOf(made, namespace);
  } catch (err) {
    if (isApiError(err, 403)) throw rbac("create");
    // another replica made it first: use its key
    if (isApiError(err, 409)) return read();
    throw err;
  }
}

/** The key from Secret <namespace>/pipe-resolver-digest-key, made on first use; a failed read is tried again next time. */
export function installationDigestKey(client: KubeClient, namespace: string): DigestKeySource {
  let loaded: Promise<Uint8Array> | undefined;
  return (signal) => {
    loaded ??= loadOrCreate(client, namespace, signal).catch((err: unknown) => {
      loaded = undefined;
      throw err;
    });
    return loaded;
  };
}
