// Bad cluster requests end in ResolutionFailed with Quarry's finer reason
// and a message naming the param or object at fault.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  createRequest,
  finished,
  newRequest,
  succeeded,
  useScenario,
  waitForRequest,
} from "@quarry/harness/scenario";

const scenario = useScenario("cluster-err", { start: ["lifecycle-controller", "cluster-resolver"] });
const cluster = { "resolution.tekton.dev/type": "cluster" };

const cases: [string, Record<string, string>, string, RegExp][] = [
  ["no-name", { kind: "task" }, "InvalidParams", /param "name" is required/],
  [
    "bad-kind",
    { kind: "trigger", name: "x" },
    "InvalidParams",
    /param "kind" must be one of task, pipeline, stepaction/,
  ],
  ["unknown-param", { name: "x", colour: "red" }, "InvalidParams", /param "colour" is not supported/],
  ["missing", { kind: "pipeline", name: "nope" }, "NotFound", /pipeline .*\/nope not found/],
];

for (const [name, params, reason, message] of cases) {
  test(`${name}: ${reason}`, async () => {
    const scn = scenario();
    await createRequest(scn.admin, newRequest(scn.namespace, name, cluster, params));
    const rr = await waitForRequest(scn, name, finished);
    const c = succeeded(rr)!;
    assert.equal(c.status, "False");
    assert.equal(c.reason, "ResolutionFailed");
    assert.match(c.message ?? "", message);
    assert.equal(rr.status?.annotations?.["quarry.dev/reason"], reason);
    assert.equal(rr.status?.data, undefined);
  });
}
