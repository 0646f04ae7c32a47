// The hostile world's per-type status policy row: each resolver's own ServiceAccount (the token
// its process runs with) writing the status of another resolver's request is denied by the
// apiserver (the quarry-<resolver>-writes admission policies), even in this namespace, which is
// labelled to skip the resolver-label policy: no namespace label lifts these.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type ResolutionRequest, resolutionRequests } from "@quarry/api";
import { createRequest, newRequest } from "@quarry/harness/scenario";
import { isApiError } from "@quarry/kube";
import type { HostileWorld } from "./fixture.ts";

/** Each resolver service, and a type that is not its own. */
const WRITERS: [service: string, otherType: string][] = [
  ["git-resolver", "bundles"],
  ["bundle-resolver", "cluster"],
  ["cluster-resolver", "pipe"],
  ["pipe-resolver", "git"],
  ["http-resolver", "cluster"],
  ["hub-resolver", "git"],
];

const MARK = "quarry.dev/accepted-by";

export function resolverStatusPolicyTest(world: () => HostileWorld): void {
  test("a resolver's status write to another type's request is denied by the apiserver", async () => {
    const { scn } = world();
    const wrong: string[] = [];
    for (const [service, otherType] of WRITERS) {
      const name = `type-policy-${service}`;
      await createRequest(
        scn.admin,
        newRequest(scn.namespace, name, { "resolution.tekton.dev/type": otherType }),
      );
      const id = scn.identities.get(service);
      assert.ok(id, `${service} runs in the hostile world`);
      const outcome = await id.client
        .mergePatch(
          resolutionRequests,
          scn.namespace,
          name,
          { status: { annotations: { [MARK]: `forged-by-${service}` } } },
          "status",
        )
        .then(
          () => "written",
          (err: unknown) =>
            isApiError(err, 403) && /writes only ResolutionRequests of type/.test(err.message)
              ? "denied"
              : String(err),
        );
      if (outcome !== "denied") wrong.push(`${service} → ${otherType} request: ${outcome}`);
      const rr = await scn.admin.get<ResolutionRequest>(resolutionRequests, scn.namespace, name);
      if (rr.status?.annotations?.[MARK] === `forged-by-${service}`)
        wrong.push(`${service}'s write is in ${name}'s status`);
    }
    assert.deepEqual(wrong, []);
  });
}
