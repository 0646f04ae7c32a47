// SSH signatures (OpenSSH's PROTOCOL.sshsig), as `git commit -S` and `git tag
// -s` write them with gpg.format=ssh, checked in process: the armored blob
// names the signer's public key, the namespace ("git" for git objects) and the
// hash of the message; the signature covers a preamble with those and the
// hash. Ed25519, ECDSA (nistp256/384/521) and RSA (rsa-sha2-256/512) keys.
import { createHash, createPublicKey, type KeyObject, verify } from "node:crypto";

/** Largest armored signature accepted: an RSA-16384 one is under 5 KiB. */
export const MAX_SSHSIG_BYTES = 16 * 1024;

const ARMOR = /^-----BEGIN SSH SIGNATURE-----\r?\n([A-Za-z0-9+/=\r\n]+?)-----END SSH SIGNATURE-----\s*$/;
const MESSAGE_HASHES = new Set(["sha256", "sha512"]);
const CURVES: Record<string, { crv: string; bytes: number; hash: string }> = {
  nistp256: { crv: "P-256", bytes: 32, hash: "sha256" },
  nistp384: { crv: "P-384", bytes: 48, hash: "sha384" },
  nistp521: { crv: "P-521", bytes: 66, hash: "sha512" },
};

export interface SshSignature {
  /** The signer's public key, as the signature names it. */
  key: KeyObject;
  /** OpenSSH's fingerprint of that key: `SHA256:` and the unpadded base64 of its wire form's hash. */
  fingerprint: string;
  namespace: string;
  hashAlgorithm: string;
  /** What the signature covers: the preamble, namespace, hash algorithm and the message's hash. */
  signedData(message: Uint8Array): Buffer;
  signatureFormat: string;
  signature: Buffer;
}

export type ParsedSshSignature = { ok: true; sig: SshSignature } | { ok: false; message: string };

/** Reads SSH wire-format fields (uint32 length, then bytes) off a buffer. */
class Wire {
  private at = 0;
  private readonly buf: Buffer;
  constructor(buf: Buffer) {
    this.buf = buf;
  }
  bytes(n: number): Buffer {
    if (this.at + n > this.buf.length) throw new Error("truncated");
    const out = this.buf.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
  uint32(): number {
    return this.bytes(4).readUInt32BE(0);
  }
  string(): Buffer {
    return this.bytes(this.uint32());
  }
  text(): string {
    return this.string().toString("latin1");
  }
  get done(): boolean {
    return this.at === this.buf.length;
  }
}

const sshString = (b: Uint8Array | string) => {
  const body = typeof b === "string" ? Buffer.from(b, "latin1") : Buffer.from(b);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(body.length);
  return Buffer.concat([len, body]);
};

const b64url = (b: Buffer) => b.toString("base64url");
/** An SSH mpint as the unsigned big-endian bytes JWK wants. */
const unsigned = (b: Buffer) => {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  return b.subarray(i);
};

/** A public key in SSH wire form (`ssh-ed25519`, `ecdsa-sha2-nistp*`, `ssh-rsa`) as a KeyObject. */
export function sshWireKey(wire: Buffer): KeyObject {
  const r = new Wire(wire);
  const type = r.text();
  if (type === "ssh-ed25519")
    return createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: b64url(r.string()) }, format: "jwk" });
  if (type === "ssh-rsa") {
    const e = unsigned(r.string());
    const n = unsigned(r.string());
    return createPublicKey({ key: { kty: "RSA", n: b64url(n), e: b64url(e) }, format: "jwk" });
  }
  const curve = type.startsWith("ecdsa-sha2-") ? CURVES[r.text()] : undefined;
  if (!curve) throw new Error(`unsupported key type ${type}`);
  const point = r.string();
  if (point[0] !== 4 || point.length !== 1 + 2 * curve.bytes) throw new Error("bad ECDSA point");
  const x = b64url(point.subarray(1, 1 + curve.bytes));
  const y = b64url(point.subarray(1 + curve.bytes));
  return createPublicKey({ key: { kty: "EC", crv: curve.crv, x, y }, format: "jwk" });
}

export function parseSshSignature(armored: string): ParsedSshSignature {
  if (armored.length > MAX_SSHSIG_BYTES)
    return { ok: false, message: `the SSH signature is ${armored.length} bytes, over ${MAX_SSHSIG_BYTES}` };
  const m = ARMOR.exec(armored.trim());
  if (!m) return { ok: false, message: "not an armored SSH signature" };
  try {
    const r = new Wire(Buffer.from(m[1]!.replace(/\s+/g, ""), "base64"));
    if (r.bytes(6).toString("latin1") !== "SSHSIG") return { ok: false, message: "not an SSHSIG blob" };
    const version = r.uint32();
    if (version !== 1) return { ok: false, message: `SSH signature version ${version}, expected 1` };
    const wireKey = r.string();
    const namespace = r.text();
    const reserved = r.string();
    const hashAlgorithm = r.text();
    const sigBlob = new Wire(r.string());
    if (!r.done) return { ok: false, message: "trailing bytes after the SSH signature" };
    if (!MESSAGE_HASHES.has(hashAlgorithm))
      return { ok: false, message: `SSH signature hash ${hashAlgorithm}: sha256 or sha512` };
    const signatureFormat = sigBlob.text();
    const signature = Buffer.from(sigBlob.string());
    const key = sshWireKey(wireKey);
    const fingerprint = `SHA256:${createHash("sha256").update(wireKey).digest("base64").replace(/=+$/, "")}`;
    const signedData = (message: Uint8Array) =>
      Buffer.concat([
        Buffer.from("SSHSIG", "latin1"),
        sshString(namespace),
        sshString(reserved),
        sshString(hashAlgorithm),
        sshString(createHash(hashAlgorithm).update(message).digest()),
      ]);
    return {
      ok: true,
      sig: { key, fingerprint, namespace, hashAlgorithm, signedData, signatureFormat, signature },
    };
  } catch (err) {
    return { ok: false, message: `malformed SSH signature: ${(err as Error).message}` };
  }
}

/** Whether `sig` is a signature over `message` in `namespace` by `key` (the authority's, not the one `sig` names). */
export function verifySshSignature(
  sig: SshSignature,
  key: KeyObject,
  message: Uint8Array,
  namespace: string,
): boolean {
  if (sig.namespace !== namespace) return false;
  // the signature must name the authority's key: a valid signature by another key is not the authority's
  if (!sig.key.equals(key)) return false;
  const data = sig.signedData(message);
  try {
    switch (sig.signatureFormat) {
      case "ssh-ed25519":
        return key.asymmetricKeyType === "ed25519" && verify(null, data, key, sig.signature);
      case "rsa-sha2-256":
      case "rsa-sha2-512":
        return (
          key.asymmetricKeyType === "rsa" &&
          verify(sig.signatureFormat === "rsa-sha2-256" ? "sha256" : "sha512", data, key, sig.signature)
        );
      default: {
        const curve = CURVES[sig.signatureFormat.replace(/^ecdsa-sha2-/, "")];
        if (!curve || key.asymmetricKeyType !== "ec") return false;
        const rs = new Wire(sig.signature);
        const pad = (b: Buffer) => {
          const u = unsigned(b);
          if (u.length > curve.bytes) throw new Error("bad ECDSA signature");
          return Buffer.concat([Buffer.alloc(curve.bytes - u.length), u]);
        };
        const p1363 = Buffer.concat([pad(rs.string()), pad(rs.string())]);
        return verify(curve.hash, data, { key, dsaEncoding: "ieee-p1363" }, p1363);
      }
    }
  } catch {
    return false;
  }
}

/** An OpenSSH public key line (`ssh-ed25519 AAAA… comment`, as in a .pub file) as a KeyObject. */
export function sshPublicKey(line: string): KeyObject {
  const [type, data] = line.trim().split(/\s+/);
  if (!type || !data) throw new Error("not an OpenSSH public key line");
  const wire = Buffer.from(data, "base64");
  if (new Wire(wire).text() !== type) throw new Error(`the key's data is not a ${type} key`);
  return sshWireKey(wire);
}
