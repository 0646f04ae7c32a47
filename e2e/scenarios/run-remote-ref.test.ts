// A Wait run whose customRef/ref is remote (resolver git, bundles or cluster)
// is resolved by the run-controller before any custom-task controller runs:
// the request it creates (owned by the run) succeeds and the run records it
// in childReferences and its refSource as provenance. Once wait-task starts,
// each run succeeds after the default duration its own definition declares.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import {
  type AnyRun,
  type RefSource,
  type ResolutionRequest,
  type RunFlavour,
  resolutionRequests,
} from "@quarry/api";
import { applyObject } from "@quarry/devcluster/apply";
import { tknBundlePush } from "@quarry/devcluster/registry";
import {
  ANNOTATION_RUN_REF_SOURCE,
  type RunRefScenario,
  recordedRequest,
  runNameFor,
  useRunRefScenario,
  waitRemoteRef,
  waitTaskYaml,
} from "@quarry/harness/run-ref-scenario";
import { createRun, FLAVOURS, getRun, runObject, runSucceeded, waitForRun } from "@quarry/harness/runs";
import { getRequest, succeeded } from "@quarry/harness/scenario";
import type { KubeObject } from "@quarry/kube";

/** Each resolver's definition declares its own default, so a run shows which one it read. */
const DEFAULTS = { git: "1s", bundles: "2s", cluster: "3s" } as const;
type Resolver = keyof typeof DEFAULTS;
const RESOLVERS = Object.keys(DEFAULTS) as Resolver[];

let bundleDigest = "";
let clusterTask: KubeObject | undefined;

const refs = useRunRefScenario("run-ref", {
  resolvers: ["git", "bundles", "cluster"],
  registry: true,
  gitFiles: { "tasks/wait.yaml": waitTaskYaml("wait", DEFAULTS.git) },
  setup: async ({ scn, registry }) => {
    bundleDigest = (
      await tknBundlePush(registry!.ref("team/wait:v1"), [waitTaskYaml("wait", DEFAULTS.bundles)])
    ).digest;
    clusterTask = await applyObject(scn.admin, {
      apiVersion: "tekton.dev/v1",
      kind: "Task",
      metadata: { name: "wait", namespace: scn.namespace },
      spec: {
        params: [{ name: "duration", type: "string", default: DEFAULTS.cluster }],
        steps: [{ name: "wait", image: "busybox", script: "sleep 1" }],
      },
    });
  },
});

function paramsFor(r: RunRefScenario, resolver: Resolver): Record<string, string> {
  switch (resolver) {
    case "git":
      return { url: r.gitUrl, revision: "main", pathInRepo: "tasks/wait.yaml" };
    case "bundles":
      return { bundle: r.registry!.ref("team/wait:v1"), name: "wait", kind: "task" };
    case "cluster":
      return { kind: "task", name: "wait" };
  }
}

/** What the request's refSource must say for each resolver (checked against the request itself). */
function expectedRefSource(r: RunRefScenario, resolver: Resolver, rr: ResolutionRequest): RefSource {
  switch (resolver) {
    case "git":
      return { uri: `git+${r.gitUrl}`, digest: { sha1: r.gitCommit }, entryPoint: "tasks/wait.yaml" };
    case "bundles":
      return {
        uri: `${r.registry!.host}/team/wait`,
        digest: { sha256: bundleDigest.slice("sha256:".length) },
        entryPoint: "wait",
      };
    case "cluster": {
      const bytes = Buffer.from(rr.status?.data ?? "", "base64");
      return {
        uri: `/apis/tekton.dev/v1/namespaces/${r.scn.namespace}/task/wait@${clusterTask?.metadata.uid}`,
        digest: { sha256: createHash("sha256").update(bytes).digest("hex") },
      };
    }
  }
}

const cases = RESOLVERS.flatMap((resolver) => FLAVOURS.map((flavour) => ({ resolver, flavour })));
const nameOf = (resolver: Resolver, flavour: RunFlavour) => runNameFor(`wait-${resolver}`, flavour);
const requestOf = new Map<string, string>();

/** The request is exactly the run's one child, and the run is its controller owner. */
function assertChild(run: AnyRun, rr: ResolutionRequest) {
  assert.deepEqual(run.status?.childReferences, [
    { apiVersion: "resolution.tekton.dev/v1beta1", kind: "ResolutionRequest", name: rr.metadata.name },
  ]);
  assert.deepEqual(rr.metadata.ownerReferences, [
    {
      apiVersion: run.apiVersion,
      kind: run.kind,
      name: run.metadata.name,
      uid: run.metadata.uid,
      controller: true,
      blockOwnerDeletion: true,
    },
  ]);
}

test("resolution completes and provenance is recorded before any custom-task controller runs", async () => {
  const r = refs();
  const { scn } = r;
  assert.ok(!scn.services.some((s) => s.name === "wait-task"), "wait-task is not running");
  await Promise.all(
    cases.map(async ({ resolver, flavour }) => {
      const name = nameOf(resolver, flavour);
      await createRun(
        scn.admin,
        runObject(flavour, scn.namespace, { name, ref: waitRemoteRef(resolver, paramsFor(r, resolver)) }),
      );
      const run = await waitForRun(
        scn,
        flavour,
        name,
        (x) => x.status?.annotations?.[ANNOTATION_RUN_REF_SOURCE] !== undefined,
      );
      const requestName = recordedRequest(run);
      assert.ok(requestName, `${name}: ${JSON.stringify(run.status)}`);
      requestOf.set(name, requestName);
      const rr = await getRequest(scn.admin, scn.namespace, requestName);
      assert.equal(succeeded(rr)?.status, "True", `${name}: ${JSON.stringify(succeeded(rr))}`);
      assert.equal(rr.metadata.labels?.["resolution.tekton.dev/type"], resolver);
      assert.deepEqual(rr.spec.params, waitRemoteRef(resolver, paramsFor(r, resolver)).params);
      assert.deepEqual(rr.status?.refSource, expectedRefSource(r, resolver, rr), name);
      assert.deepEqual(run.status?.provenance?.refSource, rr.status?.refSource, name);
      assert.deepEqual(
        JSON.parse(run.status?.annotations?.[ANNOTATION_RUN_REF_SOURCE] ?? "{}"),
        rr.status?.refSource,
      );
      assertChild(run, rr);
      // nobody started the run: resolution happened without its controller
      assert.equal(runSucceeded(run), undefined, `${name}: ${JSON.stringify(run.status?.conditions)}`);
      assert.equal(run.status?.startTime, undefined);
    }),
  );
  // one request per run, no other
  const all = await scn.admin.list<ResolutionRequest>(resolutionRequests, scn.namespace);
  assert.deepEqual(all.items.map((rr) => rr.metadata.name).sort(), [...requestOf.values()].sort());
  assert.ok(!scn.services.some((s) => s.name === "wait-task"), "wait-task is still not running");
});

test("once wait-task starts, each run succeeds after its definition's default duration", async () => {
  const r = refs();
  const { scn } = r;
  assert.equal(requestOf.size, cases.length, "the runs above were resolved first");
  await scn.start("wait-task");
  await Promise.all(
    cases.map(async ({ resolver, flavour }) => {
      const name = nameOf(resolver, flavour);
      const run = await waitForRun(scn, flavour, name);
      const c = runSucceeded(run)!;
      assert.equal(c.status, "True", `${name}: ${c.message}`);
      assert.equal(c.reason, "DurationElapsed");
      assert.deepEqual(run.status?.results, [{ name: "waited", value: DEFAULTS[resolver] }], name);
      const took = Date.parse(run.status!.completionTime!) - Date.parse(run.status!.startTime!);
      const want = Number.parseInt(DEFAULTS[resolver], 10) * 1000;
      // counted from the end of startTime's whole second: never early, up to 1s late
      assert.ok(took >= want + 1000 && took < want + 5000, `${name} took ${took} ms, wanted ${want}`);
      // wait-task used the run-controller's request: same child, same sole owner, same provenance
      const rr = await getRequest(scn.admin, scn.namespace, requestOf.get(name)!);
      assertChild(run, rr);
      assert.deepEqual(run.status?.provenance?.refSource, rr.status?.refSource);
    }),
  );
  const all = await scn.admin.list<ResolutionRequest>(resolutionRequests, scn.namespace);
  assert.equal(all.items.length, cases.length, "no request beyond one per run");
  // a done run stays as it was
  const again = await getRun(scn.admin, "CustomRun", scn.namespace, nameOf("git", "CustomRun"));
  assert.equal(runSucceeded(again)?.status, "True");
});
