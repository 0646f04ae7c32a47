// Identical in-flight requests share one fetch; with cache=always a later
// request is served from the cache and says so in Tekton's annotations;
// cache=never always fetches.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type HttpFixture, startHttpFixture, task } from "@quarry/harness/http-server";
import { createRequest, newRequest, resolvedOk, useScenario, waitForRequest } from "@quarry/harness/scenario";

let web: HttpFixture;
before(async () => {
  web = await startHttpFixture();
  // slow enough that concurrent requests overlap
  web.route("/shared.yaml", (_q, res) => setTimeout(() => res.end(task("shared")), 1500));
});
after(() => web.close());
const scenario = useScenario("sdk-cache", { start: ["lifecycle-controller", "resolver-template"] });
const http = { "resolution.tekton.dev/type": "http" };
const params = (cache: string) => ({ url: `${web.base}/shared.yaml`, cache });

test("10 concurrent identical requests make one fetch", async () => {
  const scn = scenario();
  const names = Array.from({ length: 10 }, (_, i) => `burst-${i}`);
  await Promise.all(
    names.map((n) => createRequest(scn.admin, newRequest(scn.namespace, n, http, params("always")))),
  );
  const done = await Promise.all(names.map((n) => waitForRequest(scn, n, resolvedOk)));
  assert.equal(web.hits.get("/shared.yaml"), 1);
  for (const rr of done) assert.equal(rr.status?.annotations?.["resolution.tekton.dev/cached"], "true");
});

test("a later identical request is a cache hit", async () => {
  const scn = scenario();
  await createRequest(scn.admin, newRequest(scn.namespace, "later", http, params("always")));
  const rr = await waitForRequest(scn, "later", resolvedOk);
  assert.equal(web.hits.get("/shared.yaml"), 1);
  assert.equal(rr.status?.annotations?.["resolution.tekton.dev/cache-operation"], "retrieve");
  assert.equal(rr.status?.annotations?.["resolution.tekton.dev/cache-resolver-type"], "http");
});

test("cache=never fetches again and is not marked cached", async () => {
  const scn = scenario();
  await createRequest(scn.admin, newRequest(scn.namespace, "fresh", http, params("never")));
  const rr = await waitForRequest(scn, "fresh", resolvedOk);
  assert.equal(web.hits.get("/shared.yaml"), 2);
  assert.equal(rr.status?.annotations?.["resolution.tekton.dev/cached"], undefined);
});
