// Commits and tags signed by git with gpg's keys, checked in process.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { splitCommit, splitTag } from "./git-signed.ts";
import { MAX_OPENPGP_SIGNATURE_BYTES, verifyOpenPgpSignature } from "./openpgp.ts";

const dir = mkdtempSync(join(tmpdir(), "quarry-openpgp-"));
after(() => {
  try {
    execFileSync("gpgconf", ["--kill", "all"], { env: { ...process.env, GNUPGHOME: home } });
  } catch {
    // no agent was started
  }
  rmSync(dir, { recursive: true, force: true });
});
const home = join(dir, "gnupg");
mkdirSync(home, { mode: 0o700 });
const env = { ...process.env, GNUPGHOME: home, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };
const gpg = (args: string[]) => execFileSync("gpg", ["--batch", "--quiet", ...args], { env, stdio: "pipe" });
const git = (args: string[], cwd = join(dir, "repo")) =>
  execFileSync("git", ["-c", "user.name=Signer", "-c", "user.email=s@example.test", ...args], { cwd, env });

/** A new signing key; its fingerprint and armored public key. */
function newKey(uid: string, algo: string): { fpr: string; armored: string } {
  gpg(["--passphrase", "", "--quick-gen-key", uid, algo, "sign", "never"]);
  const fpr = /^fpr:+([0-9A-F]{40}):/m.exec(gpg(["--with-colons", "--list-keys", uid]).toString())![1]!;
  return { fpr, armored: gpg(["--armor", "--export", fpr]).toString() };
}
const ed = newKey("Ed Signer <ed@example.test>", "ed25519");
const rsa = newKey("Rsa Signer <rsa@example.test>", "rsa3072");
git(["init", "-q", "-b", "main", "repo"], dir);

function signedCommit(fpr: string, content: string): Buffer {
  writeFileSync(join(dir, "repo", "task.yaml"), content);
  git(["add", "task.yaml"]);
  git(["-c", `user.signingkey=${fpr}`, "commit", "-q", "-S", "-m", content]);
  return git(["cat-file", "commit", "HEAD"]);
}

test("a gpg-signed commit verifies against its key with the signer's fingerprint, and only its key", async () => {
  for (const key of [ed, rsa]) {
    const split = splitCommit(signedCommit(key.fpr, `signed by ${key.fpr}`));
    assert.ok(split.signed && split.format === "openpgp");
    assert.deepEqual(await verifyOpenPgpSignature(split.signature, split.payload, key.armored), {
      outcome: "verified",
      fingerprint: key.fpr,
    });
    const other = key === ed ? rsa : ed;
    const wrong = await verifyOpenPgpSignature(split.signature, split.payload, other.armored);
    assert.equal(wrong.outcome, "failed");
    const tampered = Buffer.from(split.payload.toString().replace("signed by", "signed  by"));
    assert.equal((await verifyOpenPgpSignature(split.signature, tampered, key.armored)).outcome, "failed");
  }
});

test("a gpg-signed tag verifies over its object up to the signature", async () => {
  signedCommit(ed.fpr, "tagged");
  git(["-c", `user.signingkey=${ed.fpr}`, "tag", "-s", "v1", "-m", "release v1"]);
  const split = splitTag(git(["cat-file", "tag", "v1"]));
  assert.ok(split.signed && split.format === "openpgp");
  assert.equal(
    (await verifyOpenPgpSignature(split.signature, split.payload, ed.armored)).outcome,
    "verified",
  );
});

test("keys and signatures that cannot be read, and oversized ones", async () => {
  const split = splitCommit(signedCommit(ed.fpr, "third"));
  assert.ok(split.signed);
  const badKey = await verifyOpenPgpSignature(split.signature, split.payload, "not a key");
  assert.equal(badKey.outcome, "unusable");
  const badSig = await verifyOpenPgpSignature(
    "-----BEGIN PGP SIGNATURE-----\n\nAAAA\n-----END PGP SIGNATURE-----\n",
    split.payload,
    ed.armored,
  );
  assert.equal(badSig.outcome, "failed");
  const big = await verifyOpenPgpSignature(
    "x".repeat(MAX_OPENPGP_SIGNATURE_BYTES + 1),
    split.payload,
    ed.armored,
  );
  assert.deepEqual(big, { outcome: "failed", message: "the OpenPGP signature is 16385 bytes, over 16384" });
});
