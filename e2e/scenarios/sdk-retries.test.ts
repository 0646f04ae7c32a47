// Transient errors are retried with backoff; when attempts run out the
// request fails with SourceUnavailable well before the global timeout. A
// per-attempt deadline turns a hung source into a transient error too.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type HttpFixture, startHttpFixture, task } from "@quarry/harness/http-server";
import {
  createRequest,
  finished,
  newRequest,
  setConfig,
  succeeded,
  useScenario,
  waitForRequest,
} from "@quarry/harness/scenario";

let web: HttpFixture;
before(async () => {
  web = await startHttpFixture();
  web.route("/down", (_q, res) => res.writeHead(503).end());
  web.route("/flaky", (_q, res, hit) => (hit <= 2 ? res.writeHead(503).end() : res.end(task("flaky"))));
  web.route("/hang", () => {}); // never answers
});
after(() => web.close());
const scenario = useScenario("sdk-retry", {
  setup: (scn) =>
    setConfig(scn, "resolver-template-config", { "max-attempts": "3", "resolution-timeout": "1s" }),
  start: ["lifecycle-controller", "resolver-template"],
});
const http = { "resolution.tekton.dev/type": "http" };

async function run(name: string, path: string) {
  const scn = scenario();
  const created = await createRequest(
    scn.admin,
    newRequest(scn.namespace, name, http, { url: `${web.base}${path}` }),
  );
  const rr = await waitForRequest(scn, name, finished);
  const took =
    Date.parse(succeeded(rr)!.lastTransitionTime!) - Date.parse(created.metadata.creationTimestamp!);
  return { rr, took };
}

test("a source that stays down: SourceUnavailable after 3 attempts, before the global timeout", async () => {
  const { rr, took } = await run("down", "/down");
  assert.equal(rr.status?.annotations?.["quarry.dev/reason"], "SourceUnavailable");
  assert.match(succeeded(rr)?.message ?? "", /gave up after 3 attempts; attempt 3 failed: .*503/);
  assert.equal(web.hits.get("/down"), 3);
  assert.ok(took < 30_000, `took ${took} ms`);
});

test("a flaky source: retried until it answers", async () => {
  const { rr } = await run("flaky", "/flaky");
  assert.equal(succeeded(rr)?.status, "True");
  assert.equal(web.hits.get("/flaky"), 3);
});

test("a hung source: each attempt times out, then SourceUnavailable; the request was stamped as accepted", async () => {
  const { rr } = await run("hang", "/hang");
  assert.equal(rr.status?.annotations?.["quarry.dev/reason"], "SourceUnavailable");
  assert.match(succeeded(rr)?.message ?? "", /attempt 3 timed out after 1s/);
  assert.match(rr.status?.annotations?.["quarry.dev/accepted-by"] ?? "", /^http-resolver\//);
});
