// What the http resolver fails, each terminal with a reason and a message
// naming the param: a 404 (NotFound), a body over the 1 MiB cap (TooLarge),
// and a redirect to another origin (Forbidden; the other origin is never
// contacted).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { httpOutcome, useHttpScenario } from "@quarry/harness/http-scenario";
import { type HttpFixture, startHttpFixture, task } from "@quarry/harness/http-server";
import { succeeded } from "@quarry/harness/scenario";

// another origin (127.0.0.3) that a redirect points to
let other: HttpFixture;
before(async () => {
  other = await startHttpFixture({ address: "127.0.0.3" });
  other.route("/task.yaml", (_q, res) => res.end(task("elsewhere")));
});
after(() => other?.close());

const world = useHttpScenario("http-errors", {
  setup: async ({ web }) => {
    web.route("/huge.yaml", (_q, res) => res.end(`${task("huge")}# ${"x".repeat(1024 * 1024)}\n`));
    web.route("/away", (_q, res) => res.writeHead(302, { location: `${other.base}/task.yaml` }).end());
  },
});

const failed =
  (reason: string, message: string | RegExp) => (rr: Awaited<ReturnType<typeof httpOutcome>>) => {
    assert.equal(succeeded(rr)?.status, "False", JSON.stringify(succeeded(rr)));
    assert.equal(succeeded(rr)?.reason, "ResolutionFailed");
    assert.equal(rr.status?.annotations?.["quarry.dev/reason"], reason);
    if (typeof message === "string") assert.equal(succeeded(rr)?.message, message);
    else assert.match(succeeded(rr)?.message ?? "", message);
  };

test("404: NotFound naming the url", async () => {
  const { scn, web } = world();
  const url = `${web.base}/missing.yaml`;
  failed(
    "NotFound",
    `param "url": ${url} answered 404 Not Found`,
  )(await httpOutcome(scn, "missing", { url }));
});

test("a body over 1 MiB: TooLarge", async () => {
  const { scn, web } = world();
  const url = `${web.base}/huge.yaml`;
  failed(
    "TooLarge",
    `param "url": ${url} is over the 1 MiB limit for resolved data`,
  )(await httpOutcome(scn, "huge", { url }));
});

test("a redirect to another origin: Forbidden, and the other origin never hears of it", async () => {
  const { scn, web } = world();
  failed(
    "Forbidden",
    `param "url": redirected from ${web.base} to another origin ${other.base}; not followed`,
  )(await httpOutcome(scn, "away", { url: `${web.base}/away` }));
  assert.deepEqual(other.requests, []);
});
