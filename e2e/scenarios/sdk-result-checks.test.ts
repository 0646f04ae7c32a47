// The SDK runtime checks every result: it must be one tekton.dev document of
// an allowed kind and at most 1 MiB; otherwise the request fails with
// UnsupportedKind or TooLarge. (Driven through the example http resolver.)
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type HttpFixture, startHttpFixture, task } from "@quarry/harness/http-server";
import {
  createRequest,
  dataOf,
  finished,
  newRequest,
  succeeded,
  useScenario,
  waitForRequest,
} from "@quarry/harness/scenario";

let web: HttpFixture;
before(async () => {
  web = await startHttpFixture();
  web.route("/task.yaml", (_q, res) => res.end(task("fetched")));
  web.route("/configmap.yaml", (_q, res) =>
    res.end("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"),
  );
  web.route("/huge.yaml", (_q, res) => res.end(`${task("huge")}# ${"x".repeat(1024 * 1024)}\n`));
});
after(() => web.close());
const scenario = useScenario("sdk-checks", { start: ["lifecycle-controller", "resolver-template"] });
const http = { "resolution.tekton.dev/type": "http" };

async function run(name: string, path: string) {
  const scn = scenario();
  await createRequest(scn.admin, newRequest(scn.namespace, name, http, { url: `${web.base}${path}` }));
  return waitForRequest(scn, name, finished);
}

test("a Task resolves, with its refSource", async () => {
  const rr = await run("ok", "/task.yaml");
  assert.equal(succeeded(rr)?.status, "True");
  assert.match(dataOf(rr), /name: fetched/);
  assert.equal(rr.status?.refSource?.uri, `${web.base}/task.yaml`);
});

test("a ConfigMap is refused: UnsupportedKind naming the kind", async () => {
  const rr = await run("not-tekton", "/configmap.yaml");
  assert.equal(rr.status?.annotations?.["quarry.dev/reason"], "UnsupportedKind");
  assert.match(succeeded(rr)?.message ?? "", /is ConfigMap \(apiVersion v1\)/);
});

test("over 1 MiB is refused: TooLarge", async () => {
  const rr = await run("huge", "/huge.yaml");
  assert.equal(rr.status?.annotations?.["quarry.dev/reason"], "TooLarge");
  assert.match(succeeded(rr)?.message ?? "", /over the 1 MiB limit/);
  assert.equal(rr.status?.data, undefined);
});

test("a bad param never reaches the resolver: InvalidParams", async () => {
  const scn = scenario();
  await createRequest(scn.admin, newRequest(scn.namespace, "bad-url", http, { url: "ftp://x" }));
  const rr = await waitForRequest(scn, "bad-url", finished);
  assert.equal(rr.status?.annotations?.["quarry.dev/reason"], "InvalidParams");
  assert.match(succeeded(rr)?.message ?? "", /param "url"/);
});
