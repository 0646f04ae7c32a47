// Private repositories: a gitToken Secret in the request's namespace, read
// only where the namespace granted the resolver `get` on Secrets and sent only
// to URLs the Secret is bound to (here by Tekton's `tekton.dev/git-0`
// annotation; plain http because the fixture server's host is in
// `insecure-hosts`); the token goes up front in basic auth and never shows in a
// status, Event or log. Whatever is wrong with the Secret, the requester reads
// one message and the resolver's log the detail.
import assert from "node:assert/strict";
import { test } from "node:test";
import { RepoBuilder, TASK_V1 } from "@quarry/devcluster/git-repos";
import {
  createTokenSecret,
  GIT_LABELS,
  grantTokenAccess,
  insecureHostConfig,
  useGitScenario,
} from "@quarry/harness/git-scenario";
import { assertNoLeak } from "@quarry/harness/leaks";
import {
  createRequest,
  dataOf,
  finished,
  newRequest,
  resolvedOk,
  setConfig,
  succeeded,
  waitForRequest,
} from "@quarry/harness/scenario";

const TOKEN = "e2e-s3cret-git-token";
const git = useGitScenario("git-auth", {
  setup: async ({ scn, server }) => {
    const priv = await RepoBuilder.create(server.root, "team/private.git");
    priv.write("task.yaml", TASK_V1);
    await priv.commit("private");
    await priv.push();
    priv.dispose();
    server.setAuth("team/private.git", { token: TOKEN });
    await createTokenSecret(scn, "git-creds", { token: TOKEN, other: "not-the-token" }, [
      server.url("team/private.git"),
    ]);
    await setConfig(scn, "git-resolver-config", insecureHostConfig(server));
  },
});

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
/** The one message a request gets for a Secret that is missing, unreadable, keyless, empty or unbound. */
const unusable = (secret: string, key: string, url: string) =>
  new RegExp(
    `^param "gitToken": Secret [-a-z0-9]+/${secret} key "${key}" cannot be used as a git token for ${literal(url)}: it is missing, empty or unreadable by the git resolver, or not bound to this URL \\(the resolver's log says which\\)$`,
  );

async function outcome(name: string, params: Record<string, string>) {
  const { scn, server } = git();
  await createRequest(
    scn.admin,
    newRequest(scn.namespace, name, GIT_LABELS, {
      url: server.url("team/private.git"),
      pathInRepo: "task.yaml",
      ...params,
    }),
  );
  const rr = await waitForRequest(scn, name, finished);
  return { rr, condition: succeeded(rr)!, reason: rr.status?.annotations?.["quarry.dev/reason"] };
}

test("without the namespace's grant the Secret cannot be read: Forbidden, the RBAC detail in the log only", async () => {
  const { server, resolver } = git();
  const { condition, reason } = await outcome("no-grant", { gitToken: "git-creds" });
  assert.equal(condition.status, "False");
  assert.equal(reason, "Forbidden");
  assert.match(condition.message ?? "", unusable("git-creds", "token", server.url("team/private.git")));
  assert.match(resolver.logs(), /the git resolver may not read Secret [-a-z0-9]+\/git-creds \(RBAC/);
});

test("no token: Forbidden, asking for gitToken", async () => {
  const { condition, reason } = await outcome("no-token", {});
  assert.equal(reason, "Forbidden");
  assert.match(
    condition.message ?? "",
    /param "url": .* refused the credentials.*name a Secret in "gitToken"/,
  );
});

test("with the grant: the right key resolves, a wrong one is rejected, a missing Secret gets the one message", async () => {
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
  assert.equal(missing.reason, "Forbidden");
  assert.match(missing.condition.message ?? "", unusable("nope", "token", server.url("team/private.git")));
  const noKey = await outcome("missing-key", { gitToken: "git-creds", gitTokenKey: "nokey" });
  assert.equal(noKey.reason, "Forbidden");
  assert.match(noKey.condition.message ?? "", unusable("git-creds", "nokey", server.url("team/private.git")));
});

test("the token goes to no URL its Secret is not bound to, nor over plain http to a host not in insecure-hosts", async () => {
  const { scn, server, url, resolver } = git();
  await grantTokenAccess(scn);
  const unbound = await outcome("unbound-url", { gitToken: "git-creds", url });
  assert.equal(unbound.reason, "Forbidden");
  assert.match(unbound.condition.message ?? "", unusable("git-creds", "token", url));
  assert.match(resolver.logs(), /Secret [-a-z0-9]+\/git-creds is not bound to /);

  // the same server under another name: bound or not, plain http to a host that is not listed is refused
  const other = server.url("team/private.git").replace("127.0.0.1", "localhost");
  const plain = await outcome("plain-http", { gitToken: "git-creds", url: other });
  assert.equal(plain.reason, "Forbidden");
  assert.equal(
    plain.condition.message,
    `param "url": refusing to send the gitToken to ${other} over plain http: use https, or list the host in insecure-hosts in git-resolver-config`,
  );
  const authorized = server.log.filter((e) => e.user !== undefined);
  assert.ok(
    authorized.every((e) => e.repo === "team/private.git"),
    `credentials reached ${JSON.stringify(authorized.filter((e) => e.repo !== "team/private.git"))}`,
  );
});

test("the token appears in no status, Event or log line", async () => {
  const { scn, resolver } = git();
  const encoded = Buffer.from(`git:${TOKEN}`).toString("base64");
  await assertNoLeak(
    scn,
    resolver,
    [TOKEN, encoded],
    ["with-token", "wrong-token", "no-token", "unbound-url"],
  );
});
