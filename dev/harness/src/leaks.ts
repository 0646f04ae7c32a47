// Credentials must never show up where users and operators look: a request's
// status, the namespace's Events, or a service's log.
import assert from "node:assert/strict";
import { resolutionRequests } from "@quarry/api";

import { kinds } from "@quarry/devcluster/kinds";
import type { RunningService } from "@quarry/devcluster/service";
import type { Scenario } from "./scenario.ts";

export async function assertNoLeak(
  scn: Scenario,
  service: RunningService,
  needles: readonly string[],
  requests: readonly string[],
): Promise<void> {
  const logs = service.logs();
  assert.ok(logs.length > 0, "the service logged something");
  const events = JSON.stringify(await scn.admin.list(kinds.Event!, scn.namespace));
  const objects = await Promise.all(
    requests.map(async (name) => [
      name,
      JSON.stringify(await scn.admin.get(resolutionRequests, scn.namespace, name)),
    ]),
  );
  for (const needle of needles) {
    assert.equal(logs.includes(needle), false, "service log");
    assert.equal(events.includes(needle), false, "events");
    for (const [name, json] of objects) assert.equal(json?.includes(needle), false, `request ${name}`);
  }
}
