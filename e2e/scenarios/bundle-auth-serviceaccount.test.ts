// Pull credentials through a ServiceAccount: the imagePullSecrets of the
// ServiceAccount named by `serviceAccount`, or of the configured
// default-service-account when the request names neither secret nor
// serviceAccount (Tekton's behaviour); a named ServiceAccount that does not
// exist gets the one message an unusable ServiceAccount gets (the detail is in
// the resolver's log); anonymous token pulls work for public repositories.
import assert from "node:assert/strict";
import { test } from "node:test";
import { applyObject } from "@quarry/devcluster/apply";
import { tknBundlePush } from "@quarry/devcluster/registry";
import {
  createPullSecret,
  grantCredentialAccess,
  reasonOf,
  resolveBundle,
  TASK_YAML,
  tokenRealmHosts,
  useBundleScenario,
} from "@quarry/harness/bundle-scenario";
import { resolvedOk, succeeded } from "@quarry/harness/scenario";

const USER = { username: "puller", password: "e2e-sa-s3cret-pw" };
const bundles = useBundleScenario("bundle-sa", {
  registry: { auth: "token", users: [USER], anonymousPull: false },
  config: (registry) => ({ "default-service-account": "pipelines", ...tokenRealmHosts(registry) }),
  setup: async ({ scn, registry }) => {
    await tknBundlePush(registry.ref("private/task:v1"), [TASK_YAML], USER);
    await grantCredentialAccess(scn);
    await createPullSecret(scn, "pull", registry.host, USER);
    for (const name of ["builder", "pipelines"]) {
      await applyObject(scn.admin, {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name, namespace: scn.namespace },
        // a listed Secret that does not exist is skipped, as the kubelet does
        imagePullSecrets: [{ name: "not-there" }, { name: "pull" }],
      });
    }
  },
});

test("serviceAccount: its imagePullSecrets open the repository", async () => {
  const { scn, registry } = bundles();
  const rr = await resolveBundle(scn, "by-sa", {
    bundle: registry.ref("private/task:v1"),
    name: "build",
    serviceAccount: "builder",
  });
  assert.ok(resolvedOk(rr), succeeded(rr)?.message);
});

test("neither secret nor serviceAccount: the configured default ServiceAccount's pull Secrets are used", async () => {
  const { scn, registry } = bundles();
  const rr = await resolveBundle(scn, "by-default-sa", {
    bundle: registry.ref("private/task:v1"),
    name: "build",
  });
  assert.ok(resolvedOk(rr), succeeded(rr)?.message);
});

test("a named ServiceAccount that does not exist: Forbidden naming the param, the detail in the log only", async () => {
  const { scn, registry, resolver } = bundles();
  const rr = await resolveBundle(scn, "missing-sa", {
    bundle: registry.ref("private/task:v1"),
    name: "build",
    serviceAccount: "ghost",
  });
  assert.equal(reasonOf(rr), "Forbidden");
  assert.match(
    succeeded(rr)?.message ?? "",
    /^param "serviceAccount": ServiceAccount [-a-z0-9]+\/ghost cannot be used for pull credentials: it is missing or unreadable by the bundle resolver, or one of its imagePullSecrets is not a valid image pull Secret \(the resolver's log says which\)$/,
  );
  assert.match(resolver.logs(), /ServiceAccount [-a-z0-9]+\/ghost not found/);
});
