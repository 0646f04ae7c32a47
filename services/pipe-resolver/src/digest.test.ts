// The installation's digest key on the fake apiserver: made once, read after,
// a lost race reads the winner's, a short key and refused RBAC are named.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type KubeObject, secrets } from "@quarry/kube";
import { FakeKubeClient } from "@quarry/kube/testing";
import { DIGEST_KEY_SECRET, hmacSha256Hex, installationDigestKey } from "./digest.ts";

const NS = "quarry-system";
const signal = () => AbortSignal.timeout(5_000);
const calls = (c: FakeKubeClient) =>
  c.calls.map((x) => `${x.verb} ${x.resource} ${x.namespace}/${x.name ?? ""}`);

test("installationDigestKey: made on first use (32 random bytes, Quarry's), then read from the cache", async () => {
  const client = new FakeKubeClient();
  const key = installationDigestKey(client, NS);
  const [a, b] = await Promise.all([key(signal()), key(signal())]);
  assert.equal(a.length, 32);
  assert.equal(a, b, "one load for concurrent callers");
  assert.deepEqual(await key(signal()), a);
  const stored = client.object<KubeObject & { data: Record<string, string>; type: string }>(
    secrets,
    NS,
    DIGEST_KEY_SECRET,
  );
  assert.equal(stored?.type, "Opaque");
  assert.deepEqual(Buffer.from(stored?.data.key ?? "", "base64"), Buffer.from(a));
  assert.equal(stored?.metadata.labels?.["app.kubernetes.io/managed-by"], "quarry");
  assert.deepEqual(calls(client), [
    `get secrets ${NS}/${DIGEST_KEY_SECRET}`,
    `create secrets ${NS}/${DIGEST_KEY_SECRET}`,
  ]);
  // another replica (a new process) reads the same key
  assert.deepEqual(await installationDigestKey(client, NS)(signal()), a);
});

test("installationDigestKey: a replica that loses the race to make it reads the winner's", async () => {
  const client = new FakeKubeClient();
  const winner = Buffer.alloc(32, 9);
  client.react((call) => {
    if (call.verb === "create" && call.resource === "secrets") {
      client.seed(secrets, {
        metadata: { name: DIGEST_KEY_SECRET, namespace: NS },
        data: { key: winner.toString("base64") },
      });
      return undefined;
    }
    return undefined;
  });
  // the create finds the winner's Secret there: 409, then a read
  assert.deepEqual(Buffer.from(await installationDigestKey(client, NS)(signal())), winner);
});

test("installationDigestKey: a key too short, or RBAC refused, fails naming the Secret; the next call tries again", async () => {
  const client = new FakeKubeClient();
  client.seed(secrets, {
    metadata: { name: DIGEST_KEY_SECRET, namespace: NS },
    data: { key: Buffer.from("short").toString("base64") },
  });
  const key = installationDigestKey(client, NS);
  await assert.rejects(
    key(signal()),
    /^Error: Secret quarry-system\/pipe-resolver-digest-key has no data key "key" of at least 32 bytes/,
  );
  client.seed(secrets, {
    metadata: { name: DIGEST_KEY_SECRET, namespace: NS },
    data: { key: Buffer.alloc(40, 1).toString("base64") },
  });
  assert.equal((await key(signal())).length, 40, "not cached after a failure");

  const refused = new FakeKubeClient();
  refused.failNext("get", 403, { resource: "secrets" });
  await assert.rejects(
    installationDigestKey(refused, NS)(signal()),
    /may not get Secret quarry-system\/pipe-resolver-digest-key.*namespaceRules/,
  );
});

test("hmacSha256Hex: RFC 4231 test case 2", () => {
  assert.equal(
    hmacSha256Hex(Buffer.from("Jefe"), Buffer.from("what do ya want for nothing?")),
    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
  );
});
