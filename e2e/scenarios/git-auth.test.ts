// Private repositories: a gitToken Secret in the request's namespace, read
// only where the namespace granted the resolver `get` on Secrets; the token
// goes up front in basic auth and never shows in a status, Event or log.
import assert from "node:assert/strict";
import { test } from "node:test";
import { RepoBuilder, TASK_V1 } from "@quarry/devcluster/git-repos";
import { createTokenSecret, GIT_LABELS, grantTokenAccess, useGitScenario } from "../fixtures/git-scenario.ts";
import { assertNoLeak } from "../harness/leaks.ts";
import {
  createRequest,
  dataOf,
  finished,
  newRequest,
  resolvedOk,
  succeeded,
  waitForRequest,
} from "../harness/scenario.ts";

const TOKEN = "e2e-s3cret-git-token";
const git = useGitScenario("git-auth", {
  setup: async ({ scn, server }) => {
    const priv = await RepoBuilder.create(server.root, "team/private.git");
    priv.write("task.yaml", TASK_V1);
    await priv.commit("private");
    await priv.push();
    priv.dispose();
    server.setAuth("team/private.git", { token: TOKEN });
    await createTokenSecret(scn, "git-creds", { token: TOKEN, other: "not-the-token" });
  },
});

async function outcome(name: string, params: Record<string, string>) {
  const { scn, server } = git();
  const url = server.url("team/private.git");
  await createRequest(
    scn.admin,
    newRequest(scn.namespace, name, GIT_LABELS, { url, pathInRepo: "task.yaml", ...params }),
  );
  const rr = await waitForRequest(scn, name, finished);
  return { rr, condition: succeeded(rr)!, reason: rr.status?.annotations?.["quarry.dev/reason"] };
}

test("without the namespace's grant the Secret cannot be read: Forbidden (RBAC)", async () => {
  const { condition, reason } = await outcome("no-grant", { gitToken: "git-creds" });
  assert.equal(condition.status, "False");
  assert.equal(reason, "Forbidden");
  assert.match(
    condition.message ?? "",
    /param "gitToken": the git resolver may not read Secret .*\/git-creds \(RBAC\)/,
  );
});

test("no token: Forbidden, asking for gitToken", async () => {
  const { condition, reason } = await outcome("no-token", {});
  assert.equal(reason, "Forbidden");
  assert.match(
    condition.message ?? "",
    /param "url": .* refused the credentials.*name a Secret in "gitToken"/,
  );
});

test("with the grant: the right key resolves, a wrong one is rejected, a missing Secret is NotFound", async () => {
  const { scn, server } = git();
  await grantTokenAccess(scn);
  const ok = await outcome("with-token", { gitToken: "git-creds" });
  assert.equal(ok.condition.status, "True", ok.condition.message);
  assert.equal(dataOf(await waitForRequest(scn, "with-token", resolvedOk)), TASK_V1);
  assert.equal(
    server.log.filter((e) => e.repo === "team/private.git" && e.status === 200).at(-1)?.user,
    "git",
  );

  const wrong = await outcome("wrong-token", { gitToken: "git-creds", gitTokenKey: "other" });
  assert.equal(wrong.reason, "Forbidden");
  assert.match(wrong.condition.message ?? "", /param "gitToken": .*the token was rejected/);

  const missing = await outcome("missing-secret", { gitToken: "nope" });
  assert.equal(missing.reason, "NotFound");
  assert.match(missing.condition.message ?? "", /param "gitToken": Secret .*\/nope not found/);
});

test("the token appears in no status, Event or log line", async () => {
  const { scn, resolver } = git();
  const encoded = Buffer.from(`git:${TOKEN}`).toString("base64");
  await assertNoLeak(scn, resolver, [TOKEN, encoded], ["with-token", "wrong-token", "no-token"]);
});
