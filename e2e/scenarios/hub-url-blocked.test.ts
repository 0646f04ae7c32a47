// The per-request `url` names a hub the tenant chooses: it passes the same
// egress checks as any source. A hub on a blocked network is refused
// (Forbidden) and never contacted; a metadata host fails before any lookup.
import assert from "node:assert/strict";
import { test } from "node:test";
import { hubOutcome, hubTask, useHubScenario } from "@quarry/harness/hub-scenario";
import { succeeded } from "@quarry/harness/scenario";

const world = useHubScenario("hub-url-blocked", {
  addresses: ["127.0.0.3"],
  config: () => ({ "blocked-networks": "default, 127.0.0.3/32" }),
  setup: ([hub]) =>
    hub?.add({
      hub: "artifact",
      catalog: "internal",
      kind: "task",
      name: "secret-task",
      versions: [{ version: "1.0.0", yaml: hubTask("secret-task", "internal") }],
    }),
});

const failed = (rr: Awaited<ReturnType<typeof hubOutcome>>, reason: string, message: RegExp) => {
  assert.equal(succeeded(rr)?.status, "False", JSON.stringify(succeeded(rr)));
  assert.equal(rr.status?.annotations?.["quarry.dev/reason"], reason);
  assert.match(succeeded(rr)?.message ?? "", message);
};

test("url on a blocked network: Forbidden, the hub never contacted", async () => {
  const { scn, hubs } = world();
  const params = { url: hubs[0]?.base ?? "", catalog: "internal", name: "secret-task", version: "1.0" };
  failed(
    await hubOutcome(scn, "blocked", params),
    "Forbidden",
    /^param "url": Artifact Hub http:\/\/127\.0\.0\.3:\d+: refusing to connect to 127\.0\.0\.3: 127\.0\.0\.3 is in 127\.0\.0\.3\/32, which blocked-networks blocks$/,
  );
  assert.deepEqual(hubs[0]?.requests, []);
});

test("url naming a metadata service: Forbidden before any lookup", async () => {
  const { scn } = world();
  const params = { url: "http://metadata.google.internal", catalog: "x", name: "y", version: "1.0" };
  failed(
    await hubOutcome(scn, "metadata", params),
    "Forbidden",
    /^param "url": Artifact Hub http:\/\/metadata\.google\.internal: /,
  );
});
