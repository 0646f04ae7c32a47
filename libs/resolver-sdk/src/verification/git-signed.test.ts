// How objects are split, on hand-made commits; sshsig.test.ts and openpgp.test.ts check the same
// split against objects git itself signed.
import assert from "node:assert/strict";
import { test } from "node:test";
import { splitCommit, splitTag } from "./git-signed.ts";

const SSH = "-----BEGIN SSH SIGNATURE-----\n U1NIU0lH\n -----END SSH SIGNATURE-----\n";
const PGP = "-----BEGIN PGP SIGNATURE-----\n \n iQ==\n -----END PGP SIGNATURE-----\n";
const head =
  "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@x> 1 +0000\ncommitter A <a@x> 1 +0000\n";

test("a commit signed for both object formats: each format's signature, neither header in the payload", () => {
  const raw = Buffer.from(`${head}gpgsig ${SSH}gpgsig-sha256 ${PGP}mergetag object x\n\nmessage\n`);
  const sha1 = splitCommit(raw);
  const sha256 = splitCommit(raw, "sha256");
  assert.ok(sha1.signed && sha256.signed);
  assert.equal(sha1.format, "ssh");
  assert.equal(sha256.format, "openpgp");
  assert.equal(sha1.signature, SSH.replace(/\n /g, "\n"));
  for (const s of [sha1, sha256]) assert.equal(s.payload.toString(), `${head}mergetag object x\n\nmessage\n`);
});

test("header-like lines in the message are the message's", () => {
  const raw = Buffer.from(`${head}\nmessage\ngpgsig ${SSH}`);
  assert.deepEqual(splitCommit(raw), { signed: false });
});

test("a signature of no known kind is not a signature", () => {
  assert.deepEqual(splitCommit(Buffer.from(`${head}gpgsig garbage\n\nm\n`)), { signed: false });
  assert.deepEqual(splitTag(Buffer.from("object x\ntype commit\ntag v1\n\nm\n-----BEGIN NOTHING-----\n")), {
    signed: false,
  });
});

test("a tag's signature is the last armoured block; the payload is everything before it", () => {
  const body = "object x\ntype commit\ntag v1\ntagger A <a@x> 1 +0000\n\nrelease\n";
  const split = splitTag(
    Buffer.from(`${body}-----BEGIN PGP SIGNATURE-----\n\niQ==\n-----END PGP SIGNATURE-----\n`),
  );
  assert.ok(split.signed);
  assert.equal(split.format, "openpgp");
  assert.equal(split.payload.toString(), body);
});
