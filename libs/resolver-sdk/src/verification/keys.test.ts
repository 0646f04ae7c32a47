// Signatures made here with node:crypto the way sigstore's signers make them
// (ECDSA and RSA over the hash of the message, Ed25519 over the message).
import assert from "node:assert/strict";
import { createHash, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { test } from "node:test";
import { loadPublicKey, MAX_KEY_BYTES, MAX_SIGNATURE_BYTES, verifySignature } from "./keys.ts";

const checksum = createHash("sha256").update('{"kind":"Task"}').digest();
const other = createHash("sha256").update('{"kind":"Task","x":1}').digest();

const pairs = {
  ecdsa: generateKeyPairSync("ec", { namedCurve: "P-256" }),
  rsa: generateKeyPairSync("rsa", { modulusLength: 2048 }),
  ed25519: generateKeyPairSync("ed25519"),
};
const pem = (k: KeyObject, format: "spki" | "pkcs1" = "spki") =>
  k.export({ type: format, format: "pem" }).toString();

function signWith(type: keyof typeof pairs, message: Uint8Array, hash = "sha256", p1363 = false): Buffer {
  const { privateKey } = pairs[type];
  if (type === "ed25519") return sign(null, message, privateKey);
  return sign(hash, message, p1363 ? { key: privateKey, dsaEncoding: "ieee-p1363" } : privateKey);
}

function load(type: keyof typeof pairs, hash = "sha256") {
  const loaded = loadPublicKey(pem(pairs[type].publicKey), hash);
  assert.ok(loaded.ok, type);
  return loaded.key;
}

test("each key type verifies its own signature and nothing else", () => {
  for (const type of ["ecdsa", "rsa", "ed25519"] as const) {
    const key = load(type);
    assert.equal(key.type, type);
    const sig = signWith(type, checksum);
    assert.equal(verifySignature(key, checksum, sig), true, `${type}: signed`);
    assert.equal(verifySignature(key, other, sig), false, `${type}: tampered content`);
    const wrong = type === "ecdsa" ? "rsa" : "ecdsa";
    assert.equal(verifySignature(key, checksum, signWith(wrong, checksum)), false, `${type}: another key's`);
    assert.equal(verifySignature(key, checksum, Buffer.alloc(0)), false, `${type}: empty`);
    assert.equal(verifySignature(key, checksum, Buffer.from("not a signature")), false, `${type}: malformed`);
    assert.equal(
      verifySignature(key, checksum, Buffer.concat([sig, Buffer.alloc(MAX_SIGNATURE_BYTES)])),
      false,
      `${type}: over the size cap`,
    );
  }
});

test("the policy's hash algorithm is the one ECDSA and RSA signatures are checked with", () => {
  const sig384 = signWith("ecdsa", checksum, "sha384");
  assert.equal(verifySignature(load("ecdsa", "SHA384"), checksum, sig384), true);
  assert.equal(verifySignature(load("ecdsa", "sha256"), checksum, sig384), false);
  assert.equal(verifySignature(load("rsa", "sha512"), checksum, signWith("rsa", checksum, "sha512")), true);
  // Ed25519 has no separate hash: any hashAlgorithm loads and verifies the message itself
  assert.equal(verifySignature(load("ed25519", "sha512"), checksum, signWith("ed25519", checksum)), true);
});

test("ECDSA signatures in IEEE P1363 form (r||s) verify too", () => {
  assert.equal(verifySignature(load("ecdsa"), checksum, signWith("ecdsa", checksum, "sha256", true)), true);
});

test("PKCS #1 RSA public keys load", () => {
  const loaded = loadPublicKey(pem(pairs.rsa.publicKey, "pkcs1"), "");
  assert.ok(loaded.ok);
  assert.equal(verifySignature(loaded.key, checksum, signWith("rsa", checksum)), true);
});

test("keys that cannot be used are refused with a message", () => {
  const privatePem = pairs.ecdsa.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const x25519 = generateKeyPairSync("x25519");
  const rows: [pem: string, hash: string, message: RegExp][] = [
    [pem(pairs.ecdsa.publicKey), "md5", /unknown hash algorithm "md5"/],
    [pem(pairs.rsa.publicKey), "sha224", /RSA keys verify with sha256, sha384 or sha512/],
    ["not a key", "", /not PEM/],
    [privatePem, "", /"PRIVATE KEY", expected "PUBLIC KEY"/],
    ["-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", "", /cannot be read/],
    [pem(x25519.publicKey), "", /the key is x25519/],
    [`${pem(pairs.ecdsa.publicKey)}${" ".repeat(MAX_KEY_BYTES)}`, "", /over 16384/],
  ];
  for (const [text, hash, message] of rows) {
    const loaded = loadPublicKey(text, hash);
    assert.equal(loaded.ok, false, String(message));
    if (!loaded.ok) assert.match(loaded.message, message);
  }
});

test("only the first PEM block is the key", () => {
  const two = pem(pairs.ecdsa.publicKey) + pem(pairs.rsa.publicKey);
  const loaded = loadPublicKey(two, "");
  assert.ok(loaded.ok);
  assert.equal(loaded.key.type, "ecdsa");
});
