// A pending request made through the requester, for the waitFor scenarios
// (no resolver runs: the test decides what happens to it).
import { requestResolution } from "@quarry/requester";
import type { Scenario } from "./scenario.ts";

export async function pendingGitRequest(scn: Scenario, baseName = "run-1"): Promise<string> {
  const rr = await requestResolution(scn.admin, {
    namespace: scn.namespace,
    resolverType: "git",
    params: [{ name: "url", value: "https://example.com/r.git" }],
    baseName,
  });
  return rr.metadata.name!;
}
