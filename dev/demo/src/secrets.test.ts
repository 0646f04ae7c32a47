import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { certificateFacts, type SecretObject, secretBytes, secretSummary } from "./secrets.ts";

// real pairs, made as the demo's pipe pod makes them (openssl is one of the demo's requirements)
const dir = mkdtempSync(join(tmpdir(), "quarry-secrets-test-"));
after(() => rmSync(dir, { recursive: true, force: true }));
function pair(cn: string): { crt: Buffer; key: Buffer } {
  const [crt, key] = [join(dir, `${cn}.crt`), join(dir, `${cn}.key`)];
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", `/CN=${cn}`].concat([
      "-keyout",
      key,
      "-out",
      crt,
    ]),
    { stdio: "ignore" },
  );
  return { crt: readFileSync(crt), key: readFileSync(key) };
}
const a = pair("a.test");
const b = pair("b.test");

/** What must never show: the PEM text and the base64 a Secret holds it as. */
function assertNoContent(text: string, ...contents: Buffer[]): void {
  assert.doesNotMatch(text, /-----BEGIN|PRIVATE KEY/);
  for (const c of contents) {
    assert.ok(!text.includes(c.toString("base64").slice(0, 40)), "no base64 of the content");
    assert.ok(!text.includes(c.toString("utf8").split("\n")[1]!), "no line of the PEM body");
  }
}

const secret: SecretObject = {
  apiVersion: "v1",
  kind: "Secret",
  type: "Opaque",
  metadata: {
    name: "make-cert-self-signed-tls-key",
    namespace: "demo-1",
    ownerReferences: [
      { apiVersion: "tekton.dev/v1beta1", kind: "CustomRun", name: "make-cert", uid: "u1", controller: true },
    ],
  },
  data: { "tls.key": a.key.toString("base64") },
};

test("a Secret's summary names it, its type, owner and key sizes, and nothing of its content", () => {
  const text = secretSummary(secret);
  assert.equal(
    text,
    `Secret demo-1/make-cert-self-signed-tls-key  type Opaque  keys tls.key (${a.key.length} bytes)  owned by CustomRun make-cert`,
  );
  assertNoContent(text, a.key);
  assert.equal(
    secretSummary({ metadata: { name: "empty", namespace: "n" } }),
    "Secret n/empty  type Opaque  keys <none>",
  );
});

test("secretBytes decodes one key, and a missing key's error names keys, never values", () => {
  assert.deepEqual(secretBytes(secret, "tls.key"), a.key);
  assert.throws(
    () => secretBytes(secret, "tls.crt"),
    (err: Error) => {
      assert.match(err.message, /has no key tls\.crt \(it has tls\.key\)/);
      assertNoContent(err.message, a.key);
      return true;
    },
  );
});

test("a certificate's facts: subject, validity, key type and size, the key checked against it", () => {
  const facts = certificateFacts(a.crt, a.key);
  assert.match(facts, /^CN=a\.test, valid .+ GMT to .+ GMT, rsa 2048-bit key; the key is the certificate's$/);
  assertNoContent(facts, a.crt, a.key);
});

test("a key that is not the certificate's fails, naming the certificate only", () => {
  assert.throws(
    () => certificateFacts(a.crt, b.key),
    /^Error: the private key is not the key of CN=a\.test$/,
  );
  assert.throws(() => certificateFacts(Buffer.from("not a certificate"), a.key));
});
