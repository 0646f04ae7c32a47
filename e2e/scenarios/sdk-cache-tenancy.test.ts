// Two namespaces asking for the same params never share a cached result:
// their credentials may differ. (One resolver watching both namespaces.)
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type HttpFixture, startHttpFixture, task } from "@quarry/harness/http-server";
import { createRequest, newRequest, useScenario, waitForRequest } from "@quarry/harness/scenario";

let web: HttpFixture;
let other = "";
before(async () => {
  web = await startHttpFixture();
  web.route("/t.yaml", (_q, res) => res.end(task("t")));
});
after(() => web.close());
const scenario = useScenario("sdk-tenancy", {
  setup: async (scn) => {
    other = await scn.extraNamespace("sdk-tenant-b");
  },
});
const http = { "resolution.tekton.dev/type": "http" };

test("same params, two namespaces: two fetches; a repeat within one namespace is a cache hit", async () => {
  const scn = scenario();
  await scn.start("resolver-template", { QUARRY_WATCH_NAMESPACE: `${scn.namespace},${other}` });
  const params = { url: `${web.base}/t.yaml`, cache: "always" };
  const resolve = async (ns: string, name: string) => {
    await createRequest(scn.admin, newRequest(ns, name, http, params));
    return waitForRequest({ ...scn, namespace: ns }, name, (rr) => rr.status?.data !== undefined);
  };
  await resolve(scn.namespace, "a1");
  assert.equal(web.hits.get("/t.yaml"), 1);
  const b1 = await resolve(other, "b1");
  assert.equal(web.hits.get("/t.yaml"), 2, "tenant b must not get tenant a's cached result");
  assert.equal(b1.status?.annotations?.["resolution.tekton.dev/cache-operation"], "store");
  const b2 = await resolve(other, "b2");
  assert.equal(web.hits.get("/t.yaml"), 2);
  assert.equal(b2.status?.annotations?.["resolution.tekton.dev/cache-operation"], "retrieve");
});
