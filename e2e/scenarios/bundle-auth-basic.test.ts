// A private registry with Basic auth (htpasswd): a dockerconfigjson pull
// Secret named by `secret` opens it, read only where the namespace granted the
// resolver `get` on Secrets; no credentials and wrong credentials each fail
// with their own message; a Secret that is missing or unreadable gets one
// message (the detail is in the resolver's log, so a request cannot probe which
// Secrets exist); the password never shows in a status, Event or log line.
import assert from "node:assert/strict";
import { test } from "node:test";
import { tknBundlePush } from "@quarry/devcluster/registry";
import {
  createPullSecret,
  grantCredentialAccess,
  reasonOf,
  resolveBundle,
  TASK_YAML,
  useBundleScenario,
} from "@quarry/harness/bundle-scenario";
import { assertNoLeak } from "@quarry/harness/leaks";
import { resolvedOk, succeeded } from "@quarry/harness/scenario";

const USER = { username: "puller", password: "e2e-basic-s3cret-pw" };
const bundles = useBundleScenario("bundle-basic", {
  registry: { auth: "htpasswd", users: [USER] },
  setup: async ({ scn, registry }) => {
    await tknBundlePush(registry.ref("private/task:v1"), [TASK_YAML], USER);
    await createPullSecret(scn, "pull", registry.host, USER);
    await createPullSecret(scn, "wrong", registry.host, { username: USER.username, password: "not-it" });
  },
});
const message = (rr: Parameters<typeof succeeded>[0]) => succeeded(rr)?.message ?? "";
/** The one message for a named Secret the resolver cannot use, whatever is wrong with it. */
const unusable = (name: string) =>
  new RegExp(
    `^param "secret": Secret [-a-z0-9]+/${name} cannot be used as an image pull Secret: it is missing, unreadable by the bundle resolver, or not a valid kubernetes\\.io/dockerconfigjson \\(or dockercfg\\) Secret \\(the resolver's log says which\\)$`,
  );

test("without the namespace's grant the Secret cannot be read: Forbidden, the RBAC detail in the log only", async () => {
  const { scn, registry, resolver } = bundles();
  const rr = await resolveBundle(scn, "no-grant", {
    bundle: registry.ref("private/task:v1"),
    name: "build",
    secret: "pull",
  });
  assert.equal(reasonOf(rr), "Forbidden");
  assert.match(message(rr), unusable("pull"));
  assert.match(resolver.logs(), /the bundle resolver may not read Secret [-a-z0-9]+\/pull \(RBAC/);
});

test("no credentials: Forbidden, asking for a secret or serviceAccount", async () => {
  const { scn, registry } = bundles();
  await grantCredentialAccess(scn);
  const rr = await resolveBundle(scn, "anonymous", {
    bundle: registry.ref("private/task:v1"),
    name: "build",
  });
  assert.equal(reasonOf(rr), "Forbidden");
  assert.match(message(rr), /requires credentials .*name an image pull Secret in "secret"/);
});

test("the pull Secret opens the repository", async () => {
  const { scn, registry } = bundles();
  const rr = await resolveBundle(scn, "with-secret", {
    bundle: registry.ref("private/task:v1"),
    name: "build",
    secret: "pull",
  });
  assert.ok(resolvedOk(rr), message(rr));
});

test("wrong credentials: Forbidden naming the Secret; a missing Secret: the one message", async () => {
  const { scn, registry } = bundles();
  const wrong = await resolveBundle(scn, "wrong-secret", {
    bundle: registry.ref("private/task:v1"),
    name: "build",
    secret: "wrong",
  });
  assert.equal(reasonOf(wrong), "Forbidden");
  assert.match(message(wrong), /refused the credentials .*from Secret .*\/wrong/);
  const missing = await resolveBundle(scn, "missing-secret", {
    bundle: registry.ref("private/task:v1"),
    name: "build",
    secret: "nope",
  });
  assert.equal(reasonOf(missing), "Forbidden");
  assert.match(message(missing), unusable("nope"));
});

test("the password appears in no status, Event or log line", async () => {
  const { scn, resolver } = bundles();
  const basic = Buffer.from(`${USER.username}:${USER.password}`).toString("base64");
  await assertNoLeak(scn, resolver, [USER.password, basic], ["with-secret", "wrong-secret", "anonymous"]);
});
