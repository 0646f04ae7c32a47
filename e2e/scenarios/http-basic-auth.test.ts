// Basic auth from `http-username` + `http-password-secret`: the Secret is read
// in the request's namespace (which opted in with a RoleBinding) and sent only
// to URLs it is bound to (quarry.dev/credential-urls). An unbound Secret is
// Forbidden with one message naming the Secret and the origin, and the server
// never sees a request, let alone an Authorization header; the password shows
// in no status, Event or log.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  createPasswordSecret,
  grantCredentialAccess,
  httpOutcome,
  useHttpScenario,
} from "@quarry/harness/http-scenario";
import { task } from "@quarry/harness/http-server";
import { assertNoLeak } from "@quarry/harness/leaks";
import { dataOf, resolvedOk, succeeded } from "@quarry/harness/scenario";

const PASSWORD = "e2e-s3cret-http-password";
const EXPECTED = `Basic ${Buffer.from(`git:${PASSWORD}`).toString("base64")}`;
const world = useHttpScenario("http-auth", {
  // the fixture is plain http on loopback: a password may go there only when the host is listed
  config: (web) => ({ "insecure-hosts": new URL(web.base).host }),
  setup: async ({ scn, web }) => {
    web.route("/private/task.yaml", (req, res) => {
      if (req.headers.authorization !== EXPECTED) return void res.writeHead(401).end();
      res.end(task("private"));
    });
    await grantCredentialAccess(scn);
    await createPasswordSecret(scn, "bound-creds", { token: PASSWORD }, [`${web.base}/private`]);
    await createPasswordSecret(scn, "unbound-creds", { password: PASSWORD });
  },
});

test("a Secret bound to the URL: Basic auth is sent and the Task resolves", async () => {
  const { scn, web } = world();
  const rr = await httpOutcome(scn, "bound", {
    url: `${web.base}/private/task.yaml`,
    "http-username": "git",
    "http-password-secret": "bound-creds",
    "http-password-secret-key": "token",
  });
  assert.ok(resolvedOk(rr), JSON.stringify(succeeded(rr)));
  assert.match(dataOf(rr), /name: private/);
  assert.deepEqual(web.requests, [{ path: "/private/task.yaml", authorization: EXPECTED }]);
});

test("an unbound Secret is refused before anything is sent; the password leaks nowhere", async () => {
  const { scn, web } = world();
  const before = web.requests.length;
  const rr = await httpOutcome(scn, "unbound", {
    url: `${web.base}/private/task.yaml`,
    "http-username": "git",
    "http-password-secret": "unbound-creds",
  });
  assert.equal(succeeded(rr)?.status, "False");
  assert.equal(rr.status?.annotations?.["quarry.dev/reason"], "Forbidden");
  assert.equal(
    succeeded(rr)?.message,
    `param "http-password-secret": Secret ${scn.namespace}/unbound-creds key "password" cannot be used as an http password for ${web.base}: it is missing, empty or unreadable by the http resolver, or not bound to this URL (the resolver's log says which)`,
  );
  assert.equal(web.requests.length, before, "the server heard nothing");
  const resolver = scn.services.find((s) => s.name === "http-resolver");
  assert.ok(resolver);
  assert.match(resolver.logs(), /http password refused/);
  await assertNoLeak(scn, resolver, [PASSWORD, EXPECTED.slice("Basic ".length)], ["bound", "unbound"]);
});
