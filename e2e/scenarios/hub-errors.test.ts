// What the hub resolver fails at once, each terminal with a reason and a
// message naming the param or the URL: a version that is no go-version
// constraint (InvalidParams, nothing fetched), a constraint no listed version
// meets (NotFound, listing what the hub has; the other hubs are not asked),
// and a hub answer over the 1 MiB cap (TooLarge, naming the URL).
import assert from "node:assert/strict";
import { test } from "node:test";
import { hubOutcome, hubTask, useHubScenario } from "@quarry/harness/hub-scenario";
import { succeeded } from "@quarry/harness/scenario";

const world = useHubScenario("hub-errors", {
  addresses: ["127.0.0.1", "127.0.0.2"],
  config: (hubs) => ({ "artifact-hub-urls": hubs.map((h) => `- ${h.base}`).join("\n") }),
  setup: (hubs) => {
    for (const hub of hubs)
      hub.add({
        hub: "artifact",
        catalog: "tekton-catalog-tasks",
        kind: "task",
        name: "lint",
        versions: ["0.1.0", "0.2.0"].map((v) => ({ version: v, yaml: hubTask("lint", v) })),
      });
    // on the first hub only: 1.0.0's answer carries a manifest over 1 MiB; the latest release is
    // small, so the listing (which holds the latest's manifest) is not
    hubs[0]?.add({
      hub: "artifact",
      catalog: "tekton-catalog-tasks",
      kind: "task",
      name: "huge",
      versions: [
        { version: "1.0.0", yaml: hubTask("huge", "x".repeat(1024 * 1024 + 1)) },
        { version: "1.1.0", yaml: hubTask("huge", "small") },
      ],
    });
  },
});

const failed = (rr: Awaited<ReturnType<typeof hubOutcome>>, reason: string, message: RegExp) => {
  assert.equal(succeeded(rr)?.status, "False", JSON.stringify(succeeded(rr)));
  assert.equal(rr.status?.annotations?.["quarry.dev/reason"], reason);
  assert.match(succeeded(rr)?.message ?? "", message);
};

test("a malformed constraint: InvalidParams, and no hub hears of it", async () => {
  const { scn, hubs } = world();
  const rr = await hubOutcome(scn, "malformed", { name: "lint", version: ">= banana" });
  failed(rr, "InvalidParams", /^param "version": malformed constraint: >= banana; expected a version/);
  assert.deepEqual(hubs[0]?.requests, []);
});

test("no listed version matches: NotFound naming the versions; the second hub is not asked", async () => {
  const { scn, hubs } = world();
  const rr = await hubOutcome(scn, "no-match", { name: "lint", version: ">= 1.0" });
  failed(
    rr,
    "NotFound",
    /^param "version": no version of task lint in catalog tekton-catalog-tasks on Artifact Hub http:\/\/127\.0\.0\.1:\d+ matches ">= 1\.0" \(it lists 0\.1\.0, 0\.2\.0\)$/,
  );
  assert.deepEqual(hubs[1]?.requests, []);
});

test("an answer over 1 MiB: TooLarge naming the URL; nothing is asked of the next hub", async () => {
  const { scn, hubs } = world();
  const rr = await hubOutcome(scn, "too-large", { name: "huge", version: "1.0" });
  failed(
    rr,
    "TooLarge",
    /^Artifact Hub http:\/\/127\.0\.0\.1:\d+: http:\/\/127\.0\.0\.1:\d+\/api\/v1\/packages\/tekton-task\/tekton-catalog-tasks\/huge\/1\.0\.0 is over the 1 MiB limit for resolved data$/,
  );
  assert.deepEqual(hubs[1]?.requests, []);
});
