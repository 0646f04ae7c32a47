// OpenPGP signatures (what `git commit -S` and `git tag -s` write with gpg),
// checked in process with OpenPGP.js against the authority's armored public
// key: a detached signature over the object's signed part. OpenPGP.js is
// loaded on first use, so a process that never meets one does not pay for it.

/** Largest armored public key accepted (a key with many user IDs and subkeys stays far below). */
export const MAX_OPENPGP_KEY_BYTES = 64 * 1024;
/** Largest armored signature accepted: an RSA-4096 one is about 1 KiB. */
export const MAX_OPENPGP_SIGNATURE_BYTES = 16 * 1024;

export type OpenPgpCheck =
  | { outcome: "verified"; fingerprint: string }
  | { outcome: "failed"; message: string }
  | { outcome: "unusable"; message: string };

type OpenPgp = typeof import("openpgp");
let library: Promise<OpenPgp> | undefined;
const openpgp = (): Promise<OpenPgp> => {
  library ??= import("openpgp");
  return library;
};

/** Whether `armoredSignature` is a valid signature over `payload` by `armoredKey` (or one of its subkeys). */
export async function verifyOpenPgpSignature(
  armoredSignature: string,
  payload: Uint8Array,
  armoredKey: string,
): Promise<OpenPgpCheck> {
  if (armoredKey.length > MAX_OPENPGP_KEY_BYTES)
    return {
      outcome: "unusable",
      message: `the OpenPGP key is ${armoredKey.length} bytes, over ${MAX_OPENPGP_KEY_BYTES}`,
    };
  if (armoredSignature.length > MAX_OPENPGP_SIGNATURE_BYTES)
    return {
      outcome: "failed",
      message: `the OpenPGP signature is ${armoredSignature.length} bytes, over ${MAX_OPENPGP_SIGNATURE_BYTES}`,
    };
  const pgp = await openpgp();
  let key: Awaited<ReturnType<OpenPgp["readKey"]>>;
  try {
    key = await pgp.readKey({ armoredKey });
  } catch (err) {
    return { outcome: "unusable", message: `the OpenPGP key cannot be read: ${(err as Error).message}` };
  }
  let signature: Awaited<ReturnType<OpenPgp["readSignature"]>>;
  try {
    signature = await pgp.readSignature({ armoredSignature });
  } catch (err) {
    return { outcome: "failed", message: `the OpenPGP signature cannot be read: ${(err as Error).message}` };
  }
  try {
    const message = await pgp.createMessage({ binary: payload });
    const { signatures } = await pgp.verify({ message, signature, verificationKeys: key, format: "binary" });
    const [first] = signatures;
    if (!first) return { outcome: "failed", message: "the OpenPGP signature holds no signature" };
    await first.verified;
    const signer = key.getKeys(first.keyID)[0];
    return { outcome: "verified", fingerprint: (signer ?? key).getFingerprint().toUpperCase() };
  } catch (err) {
    return { outcome: "failed", message: `the OpenPGP signature does not verify: ${(err as Error).message}` };
  }
}
