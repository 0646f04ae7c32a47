import assert from "node:assert/strict";
import { test } from "node:test";
import { secrets } from "@quarry/kube";
import { FakeKubeClient } from "@quarry/kube/testing";
import { kubeCredentialReader } from "./credential-secret.ts";

const b64 = (s: string) => Buffer.from(s).toString("base64");
const signal = new AbortController().signal;

function client() {
  const c = new FakeKubeClient();
  c.seed(secrets, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      namespace: "team-a",
      name: "creds",
      annotations: { "quarry.dev/credential-urls": "https://h" },
    },
    data: { token: b64(" t0k \n"), empty: b64(""), blank: b64("  ") },
  });
  return c;
}

const opts = { reader: "the git resolver", optInRole: "quarry-git-resolver-tokens" };

test("a credential comes with its Secret's annotations; trimmed only when asked", async () => {
  const trimmed = kubeCredentialReader(client(), { ...opts, trim: true });
  assert.deepEqual(await trimmed("team-a", "creds", "token", signal), {
    value: "t0k",
    annotations: { "quarry.dev/credential-urls": "https://h" },
  });
  const asStored = kubeCredentialReader(client(), { ...opts, trim: false });
  assert.equal(((await asStored("team-a", "creds", "token", signal)) as { value: string }).value, " t0k \n");
});

test("why a Secret cannot serve: missing, no key, empty, blank once trimmed, RBAC", async () => {
  const c = client();
  const read = kubeCredentialReader(c, { ...opts, trim: true });
  const cases: [string, string, string][] = [
    ["nope", "token", "Secret team-a/nope not found"],
    ["creds", "other", 'Secret team-a/creds has no key "other"'],
    ["creds", "empty", 'key "empty" of Secret team-a/creds is empty'],
    ["creds", "blank", 'key "blank" of Secret team-a/creds is empty'],
  ];
  for (const [name, key, problem] of cases) {
    assert.deepEqual(await read("team-a", name, key, signal), { problem }, `${name}/${key}`);
  }
  c.failNext("get", 403, { resource: "secrets" });
  assert.deepEqual(await read("team-a", "creds", "token", signal), {
    problem:
      "the git resolver may not read Secret team-a/creds (RBAC: bind quarry-git-resolver-tokens in team-a)",
  });
});

test("any other API failure is thrown (transient, retried)", async () => {
  const c = client();
  c.failNext("get", 500, { resource: "secrets" });
  await assert.rejects(kubeCredentialReader(c, { ...opts, trim: true })("team-a", "creds", "token", signal));
});
