// Each resolver writes status only on requests of its own type: RBAC lets every resolver patch
// every request's status, and the quarry-<resolver>-writes admission policies shipped with the
// CRDs have the apiserver deny the rest. The resolvers' real ServiceAccount tokens, shipped RBAC.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type ResolutionRequest, resolutionRequests } from "@quarry/api";
import { waitUntil } from "@quarry/devcluster/wait";
import { createRequest, newRequest, useScenario } from "@quarry/harness/scenario";
import { isApiError, type KubeClient } from "@quarry/kube";

const TYPE = "resolution.tekton.dev/type";
const ALIAS = "resolution.tekton.dev/resolver";

const scenario = useScenario("type-policy", {
  setup: async (scn) => {
    const make = (name: string, labels: Record<string, string>) =>
      createRequest(scn.admin, newRequest(scn.namespace, name, labels));
    await make("git-req", { [TYPE]: "git" });
    await make("bundles-req", { [TYPE]: "bundles" });
    // an alias value in the canonical label, and the seed's label alone (before the lifecycle
    // controller normalises it): still the resolver's own
    await make("bundle-alias-req", { [TYPE]: "bundle" });
    await make("seed-label-req", { [ALIAS]: "in-cluster" });
  },
});

const annotate = (client: KubeClient, name: string, value: string) =>
  client.mergePatch(
    resolutionRequests,
    scenario().namespace,
    name,
    { status: { annotations: { "quarry.dev/accepted-by": value } } },
    "status",
  );

const client = async (service: string) => (await scenario().identity(service)).client;

test("the git resolver's ServiceAccount may not write a bundles request's status", async () => {
  const git = await client("git-resolver");
  // a policy is enforced a moment after it is installed
  const err = await waitUntil("the git resolver's write denied", async () => {
    try {
      await annotate(git, "bundles-req", `probe-${Date.now()}`);
      return undefined;
    } catch (e) {
      return e;
    }
  });
  assert.ok(isApiError(err), String(err));
  // reason Forbidden: 403, the policy named in the message
  assert.equal(err.status, 403, err.message);
  assert.match(err.message, /quarry-git-resolver-writes/);
  assert.match(err.message, /ServiceAccount quarry-git-resolver writes only ResolutionRequests of type git/);
  const rr = await scenario().admin.get<ResolutionRequest>(
    resolutionRequests,
    scenario().namespace,
    "bundles-req",
  );
  assert.equal(rr.status?.annotations?.["quarry.dev/accepted-by"], undefined, "nothing written");
});

test("the git resolver's ServiceAccount writes its own type's request", async () => {
  await annotate(await client("git-resolver"), "git-req", "git");
});

test("a request labelled by an alias name is its resolver's own", async () => {
  const bundles = await client("bundle-resolver");
  await annotate(bundles, "bundle-alias-req", "bundles");
  await annotate(await client("cluster-resolver"), "seed-label-req", "cluster");
  await assert.rejects(
    annotate(bundles, "git-req", "bundles"),
    (e) => isApiError(e, 403) && /of type bundles \(or its alias bundle\)/.test(e.message),
  );
});
