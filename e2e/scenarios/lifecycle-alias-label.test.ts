// The seed's label and resolver names are accepted and normalised.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createRequest, getRequest, newRequest, newScenario, type Scenario } from "../harness/scenario.ts";
import { waitUntil } from "../harness/wait.ts";

let scn: Scenario;
before(async () => {
  scn = await newScenario("lc-alias");
  await scn.start("lifecycle-controller");
});
after(() => scn.cleanup());

const cases: [string, Record<string, string>, string][] = [
  ["seed-label", { "resolution.tekton.dev/resolver": "in-cluster" }, "cluster"],
  ["seed-name", { "resolution.tekton.dev/type": "bundle" }, "bundles"],
  ["seed-both", { "resolution.tekton.dev/resolver": "git" }, "git"],
];

for (const [name, labels, want] of cases) {
  test(`${JSON.stringify(labels)} gets resolution.tekton.dev/type=${want}`, async () => {
    await createRequest(scn.admin, newRequest(scn.namespace, name, labels));
    const rr = await waitUntil("canonical label", async () => {
      const r = await getRequest(scn.admin, scn.namespace, name);
      return r.metadata.labels?.["resolution.tekton.dev/type"] === want ? r : undefined;
    });
    // the original labels stay: other clients may select on them
    for (const [k, v] of Object.entries(labels))
      if (k !== "resolution.tekton.dev/type") assert.equal(rr.metadata.labels?.[k], v);
  });
}
