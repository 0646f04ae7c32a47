// The seed's label and resolver names are accepted and normalised.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createRequest, newRequest, useScenario, waitForRequest } from "@quarry/harness/scenario";

const scenario = useScenario("lc-alias", { start: ["lifecycle-controller"] });

const cases: [string, Record<string, string>, string][] = [
  ["seed-label", { "resolution.tekton.dev/resolver": "in-cluster" }, "cluster"],
  ["seed-name", { "resolution.tekton.dev/type": "bundle" }, "bundles"],
  ["seed-both", { "resolution.tekton.dev/resolver": "git" }, "git"],
];

for (const [name, labels, want] of cases) {
  test(`${JSON.stringify(labels)} gets resolution.tekton.dev/type=${want}`, async () => {
    const scn = scenario();
    await createRequest(scn.admin, newRequest(scn.namespace, name, labels));
    const rr = await waitForRequest(
      scn,
      name,
      (r) => r.metadata.labels?.["resolution.tekton.dev/type"] === want,
    );
    // the original labels stay: other clients may select on them
    for (const [k, v] of Object.entries(labels))
      if (k !== "resolution.tekton.dev/type") assert.equal(rr.metadata.labels?.[k], v);
  });
}
