// The http resolver over plain HTTP on loopback: a request with Tekton's
// `url` param gets the body as status.data, Tekton's refSource (the url, the
// sha256 of the content) and the url annotation; without a digest nothing is
// cached in auto mode, so a second identical request fetches again.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import { httpOutcome, useHttpScenario } from "@quarry/harness/http-scenario";
import { task } from "@quarry/harness/http-server";
import { dataOf, resolvedOk, succeeded } from "@quarry/harness/scenario";

const BODY = task("fetched");
const world = useHttpScenario("http-resolve", {
  setup: async ({ web }) => web.route("/tasks/fetched.yaml", (_q, res) => res.end(BODY)),
});

test("a Task over plain HTTP: data, refSource and annotation as Tekton's; auto mode does not cache it", async () => {
  const { scn, web } = world();
  const url = `${web.base}/tasks/fetched.yaml`;
  const rr = await httpOutcome(scn, "plain", { url });
  assert.ok(resolvedOk(rr), JSON.stringify(succeeded(rr)));
  assert.equal(dataOf(rr), BODY);
  assert.deepEqual(rr.status?.refSource, {
    uri: url,
    digest: { sha256: createHash("sha256").update(BODY).digest("hex") },
  });
  assert.equal(rr.status?.annotations?.["resolution.tekton.dev/url"], url);
  const again = await httpOutcome(scn, "plain-again", { url });
  assert.ok(resolvedOk(again));
  assert.equal(again.status?.annotations?.["resolution.tekton.dev/cached"], undefined);
  assert.equal(web.hits.get("/tasks/fetched.yaml"), 2, "no digest: fetched each time");
});
