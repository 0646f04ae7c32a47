// A registry with token auth (Bearer challenge, a token service as realm):
// the resolver trades the pull Secret's credentials for a token scoped to the
// repository and pulls with it; one token serves many requests; the token
// service refusing the credentials is Forbidden; the token never leaks.
import assert from "node:assert/strict";
import { test } from "node:test";
import { tknBundlePush } from "@quarry/devcluster/registry";
import {
  createPullSecret,
  grantCredentialAccess,
  reasonOf,
  resolveBundle,
  TASK_YAML,
  taskYaml,
  tokenRealmHosts,
  useBundleScenario,
} from "@quarry/harness/bundle-scenario";
import { assertNoLeak } from "@quarry/harness/leaks";
import { resolvedOk, succeeded } from "@quarry/harness/scenario";

const USER = { username: "puller", password: "e2e-bearer-s3cret-pw" };
const bundles = useBundleScenario("bundle-bearer", {
  registry: { auth: "token", users: [USER] },
  // the fixture's token server is on another port: without the pairing the credential is withheld
  config: tokenRealmHosts,
  setup: async ({ scn, registry }) => {
    await tknBundlePush(registry.ref("private/task:v1"), [TASK_YAML, taskYaml("lint")], USER);
    await grantCredentialAccess(scn);
    await createPullSecret(scn, "pull", registry.host, USER);
    await createPullSecret(scn, "wrong", registry.host, { username: USER.username, password: "not-it" });
  },
});

test("the pull Secret's credentials buy a pull token for the repository; later requests reuse it", async () => {
  const { scn, registry } = bundles();
  registry.token?.clear();
  const first = await resolveBundle(scn, "first", {
    bundle: registry.ref("private/task:v1"),
    name: "build",
    secret: "pull",
  });
  assert.ok(resolvedOk(first), succeeded(first)?.message);
  const second = await resolveBundle(scn, "second", {
    bundle: registry.ref("private/task:v1"),
    name: "lint",
    secret: "pull",
  });
  assert.ok(resolvedOk(second), succeeded(second)?.message);
  const granted = (registry.token?.requests() ?? []).filter((r) => r.status === 200);
  assert.equal(granted.length, 1, JSON.stringify(registry.token?.requests()));
  assert.equal(granted[0]?.user, USER.username);
  assert.deepEqual(granted[0]?.scopes, ["repository:private/task:pull"]);
});

test("no credentials: the token service grants nothing, Forbidden", async () => {
  const { scn, registry } = bundles();
  const rr = await resolveBundle(scn, "anonymous", {
    bundle: registry.ref("private/task:v1"),
    name: "build",
  });
  assert.equal(reasonOf(rr), "Forbidden");
});

test("wrong credentials: the token service refuses them, Forbidden naming the Secret", async () => {
  const { scn, registry } = bundles();
  const rr = await resolveBundle(scn, "wrong", {
    bundle: registry.ref("private/task:v1"),
    name: "build",
    secret: "wrong",
  });
  assert.equal(reasonOf(rr), "Forbidden");
  assert.match(succeeded(rr)?.message ?? "", /token service refused the credentials .*from Secret .*\/wrong/);
});

test("neither the password nor a token appears in a status, Event or log line", async () => {
  const { scn, resolver } = bundles();
  const basic = Buffer.from(`${USER.username}:${USER.password}`).toString("base64");
  // every token the realm issues starts with this JWT header (base64url, whole 3-byte groups only)
  const jwt = Buffer.from('{"alg":"RS256","typ":"JWT"').toString("base64url").slice(0, 32);
  await assertNoLeak(scn, resolver, [USER.password, basic, jwt], ["first", "second", "wrong", "anonymous"]);
});
