import assert from "node:assert/strict";
import { test } from "node:test";
import { parseVerificationPolicy, policyCovers } from "./policy.ts";

const policy = (spec: Record<string, unknown>, namespace = "team-a") => ({
  apiVersion: "tekton.dev/v1alpha1",
  kind: "VerificationPolicy",
  metadata: { name: "p", namespace },
  spec,
});
const key = { data: "-----BEGIN PUBLIC KEY-----\n...\n-----END PUBLIC KEY-----\n" };
const valid = {
  resources: [{ pattern: "https://github\\.com/team-a/.*" }],
  authorities: [{ name: "k", key }],
};

test("a valid policy: enforce by default, its patterns compiled, its keys where they come from", async () => {
  const p = await parseVerificationPolicy(
    policy({
      ...valid,
      authorities: [
        { name: "inline", key: { ...key, hashAlgorithm: "SHA384" } },
        { name: "secret", key: { secretRef: { name: "keys" } } },
        { name: "secret-here", key: { secretRef: { name: "keys", namespace: "team-a" } } },
      ],
    }),
  );
  assert.equal(p.problem, undefined);
  assert.equal(p.mode, "enforce");
  assert.deepEqual(
    p.authorities.map((a) => [a.name, a.key.from, a.hash]),
    [
      ["inline", "data", "SHA384"],
      ["secret", "secret", ""],
      ["secret-here", "secret", ""],
    ],
  );
  assert.deepEqual(p.authorities[1]?.key, { from: "secret", namespace: "team-a", name: "keys" });
  assert.equal(policyCovers(p, "https://github.com/team-a/tasks.git"), true);
  assert.equal(policyCovers(p, "https://github.com/team-b/tasks.git"), false);
  assert.equal((await parseVerificationPolicy(policy({ ...valid, mode: "warn" }))).mode, "warn");
});

test("what Tekton's webhook refuses, and what Quarry refuses besides, makes a policy unusable", async () => {
  const rows: [spec: Record<string, unknown>, problem: RegExp][] = [
    [{ ...valid, resources: [] }, /spec\.resources is empty/],
    [{ ...valid, authorities: [] }, /spec\.authorities is empty/],
    [{ ...valid, mode: "audit" }, /spec\.mode is "audit": enforce or warn/],
    [
      { ...valid, resources: [{ pattern: "(" }] },
      /spec\.resources\[0\]\.pattern: the pattern is not a regular expression/,
    ],
    [{ ...valid, authorities: [{ name: "k" }] }, /spec\.authorities\[0\]\.key is missing/],
    [
      { ...valid, authorities: [{ name: "k", key: {} }] },
      /sets none of data, secretRef and kms: exactly one/,
    ],
    [
      { ...valid, authorities: [{ name: "k", key: { ...key, secretRef: { name: "s" } } }] },
      /sets data and secretRef of data, secretRef and kms/,
    ],
    [
      { ...valid, authorities: [{ name: "k", key: { ...key, hashAlgorithm: "md5" } }] },
      /hashAlgorithm is "md5"/,
    ],
    [{ ...valid, authorities: [{ name: "k", key: { kms: "gcpkms://x" } }] }, /KMS keys are not supported/],
    // a key Secret in another tenant's namespace
    [
      { ...valid, authorities: [{ name: "k", key: { secretRef: { name: "s", namespace: "team-b" } } }] },
      /names a Secret in namespace "team-b": a policy's key Secret must be in its own namespace "team-a"/,
    ],
  ];
  for (const [spec, problem] of rows) {
    const p = await parseVerificationPolicy(policy(spec));
    assert.match(p.problem ?? "(none)", problem);
  }
});

test("a policy whose pattern does not compile covers every source of its namespace", async () => {
  const p = await parseVerificationPolicy(
    policy({ ...valid, resources: [{ pattern: "https://ok\\.example/.*" }, { pattern: "[" }] }),
  );
  assert.ok(p.problem);
  assert.equal(policyCovers(p, "https://anything.example/x.git"), true);
});
