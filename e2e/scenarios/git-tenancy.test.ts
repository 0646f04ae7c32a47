// A private repository read with tenant A's token is cached; tenant B, asking
// for the same file without credentials, is refused instead of being served
// A's cached bytes (one resolver watching both namespaces).
import assert from "node:assert/strict";
import { test } from "node:test";
import { addPrivateRepo, GIT_LABELS, insecureHostConfig, useGitScenario } from "@quarry/harness/git-scenario";
import {
  createRequest,
  finished,
  newRequest,
  setConfig,
  succeeded,
  waitForRequest,
} from "@quarry/harness/scenario";

const TOKEN = "tenant-a-token";
let tenantB = "";
const git = useGitScenario("git-tenancy", {
  setup: async ({ scn, server }) => {
    await addPrivateRepo(scn, server, "a/private.git", TOKEN);
    await setConfig(scn, "git-resolver-config", insecureHostConfig(server));
    tenantB = await scn.extraNamespace("git-tenant-b");
  },
  env: ({ scn }) => ({ QUARRY_WATCH_NAMESPACE: `${scn.namespace},${tenantB}` }),
});

test("tenant B is not served tenant A's cached private file", async () => {
  const { scn, server } = git();
  const url = server.url("a/private.git");
  const params = { url, revision: "main", pathInRepo: "task.yaml", cache: "always" };
  await createRequest(
    scn.admin,
    newRequest(scn.namespace, "a-reads", GIT_LABELS, { ...params, gitToken: "git-creds" }),
  );
  const a = await waitForRequest(scn, "a-reads", finished);
  assert.equal(succeeded(a)?.status, "True", succeeded(a)?.message);

  await createRequest(scn.admin, newRequest(tenantB, "b-reads", GIT_LABELS, params));
  const b = await waitForRequest({ ...scn, namespace: tenantB }, "b-reads", finished);
  assert.equal(succeeded(b)?.status, "False");
  assert.equal(b.status?.annotations?.["quarry.dev/reason"], "Forbidden");
  assert.equal(b.status?.data, undefined);

  await createRequest(
    scn.admin,
    newRequest(tenantB, "b-names-a-secret", GIT_LABELS, { ...params, gitToken: "git-creds" }),
  );
  const b2 = await waitForRequest({ ...scn, namespace: tenantB }, "b-names-a-secret", finished);
  assert.equal(succeeded(b2)?.status, "False", "B cannot use a Secret that lives in A");
  assert.equal(b2.status?.data, undefined);
});
