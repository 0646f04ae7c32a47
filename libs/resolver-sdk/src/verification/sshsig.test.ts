// Commits and tags signed by git itself with ssh-keygen keys (gpg.format=ssh),
// checked in process against the authority's key as a policy gives it (PEM).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { splitCommit, splitTag } from "./git-signed.ts";
import { loadPublicKey } from "./keys.ts";
import { MAX_SSHSIG_BYTES, parseSshSignature, sshPublicKey, verifySshSignature } from "./sshsig.ts";

const dir = mkdtempSync(join(tmpdir(), "quarry-sshsig-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const git = (args: string[], cwd = dir) =>
  execFileSync("git", ["-c", "user.name=Signer", "-c", "user.email=s@example.test", ...args], {
    cwd,
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
  });
const KEYS = {
  ed25519: ["-t", "ed25519"],
  ecdsa: ["-t", "ecdsa", "-b", "256"],
  rsa: ["-t", "rsa", "-b", "2048"],
};
for (const [name, args] of Object.entries(KEYS))
  execFileSync("ssh-keygen", ["-q", ...args, "-N", "", "-C", name, "-f", join(dir, name)]);
git(["init", "-q", "-b", "main", "repo"]);
const repo = join(dir, "repo");

/** The authority's key as a VerificationPolicy carries it: PEM, converted from the .pub line. */
function authority(name: string) {
  const pem = sshPublicKey(readFileSync(join(dir, `${name}.pub`), "utf8"))
    .export({ type: "spki", format: "pem" })
    .toString();
  const loaded = loadPublicKey(pem, "");
  assert.ok(loaded.ok);
  return loaded.key.key;
}

function signedCommit(key: string, message: string): Buffer {
  writeFileSync(join(repo, "task.yaml"), message);
  git(["add", "task.yaml"], repo);
  git(
    ["-c", "gpg.format=ssh", "-c", `user.signingkey=${join(dir, key)}`, "commit", "-q", "-S", "-m", message],
    repo,
  );
  return git(["cat-file", "commit", "HEAD"], repo);
}

test("a commit signed with each key type verifies against its key, and only its key", () => {
  for (const key of Object.keys(KEYS)) {
    const split = splitCommit(signedCommit(key, `signed by ${key}`));
    assert.ok(split.signed && split.format === "ssh", key);
    assert.doesNotMatch(split.payload.toString(), /gpgsig|SSH SIGNATURE/);
    const parsed = parseSshSignature(split.signature);
    assert.ok(parsed.ok, key);
    assert.equal(
      verifySshSignature(parsed.sig, authority(key), split.payload, "git"),
      true,
      `${key}: signed`,
    );
    const fp = execFileSync("ssh-keygen", ["-l", "-f", join(dir, `${key}.pub`)])
      .toString()
      .split(" ")[1];
    assert.equal(parsed.sig.fingerprint, fp, `${key}: fingerprint as ssh-keygen prints it`);
    const tampered = Buffer.from(split.payload.toString().replace(/signed by/, "signed  by"));
    assert.equal(verifySshSignature(parsed.sig, authority(key), tampered, "git"), false, `${key}: tampered`);
    const other = key === "ed25519" ? "ecdsa" : "ed25519";
    assert.equal(
      verifySshSignature(parsed.sig, authority(other), split.payload, "git"),
      false,
      `${key}: wrong key`,
    );
    assert.equal(
      verifySshSignature(parsed.sig, authority(key), split.payload, "file"),
      false,
      `${key}: namespace`,
    );
  }
});

test("a signed annotated tag verifies over its object up to the signature", () => {
  signedCommit("ed25519", "tagged");
  git(
    [
      "-c",
      "gpg.format=ssh",
      "-c",
      `user.signingkey=${join(dir, "ed25519")}`,
      "tag",
      "-s",
      "v1",
      "-m",
      "release v1",
    ],
    repo,
  );
  const split = splitTag(git(["cat-file", "tag", "v1"], repo));
  assert.ok(split.signed && split.format === "ssh");
  assert.match(split.payload.toString(), /^object [0-9a-f]{40}\ntype commit\ntag v1\n[\s\S]*release v1\n$/);
  const parsed = parseSshSignature(split.signature);
  assert.ok(parsed.ok);
  assert.equal(verifySshSignature(parsed.sig, authority("ed25519"), split.payload, "git"), true);
  assert.equal(verifySshSignature(parsed.sig, authority("rsa"), split.payload, "git"), false);
});

test("a signature for another object does not verify this one", () => {
  const first = splitCommit(signedCommit("ecdsa", "first"));
  const second = splitCommit(signedCommit("ecdsa", "second"));
  assert.ok(first.signed && second.signed);
  const parsed = parseSshSignature(first.signature);
  assert.ok(parsed.ok);
  assert.equal(verifySshSignature(parsed.sig, authority("ecdsa"), second.payload, "git"), false);
});

test("unsigned objects, and signatures that cannot be read, are told apart", () => {
  git(["commit", "-q", "--allow-empty", "-m", "unsigned"], repo);
  assert.deepEqual(splitCommit(git(["cat-file", "commit", "HEAD"], repo)), { signed: false });
  git(["tag", "-a", "v0", "-m", "unsigned tag"], repo);
  assert.deepEqual(splitTag(git(["cat-file", "tag", "v0"], repo)), { signed: false });
  const rows: [string, RegExp][] = [
    ["garbage", /not an armored SSH signature/],
    ["-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n", /not an SSHSIG blob|malformed/],
    [
      `-----BEGIN SSH SIGNATURE-----\n${"A".repeat(MAX_SSHSIG_BYTES)}\n-----END SSH SIGNATURE-----\n`,
      /over 16384/,
    ],
  ];
  for (const [text, message] of rows) {
    const parsed = parseSshSignature(text);
    assert.equal(parsed.ok, false);
    if (!parsed.ok) assert.match(parsed.message, message);
  }
});
