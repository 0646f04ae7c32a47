// The shard label on a real apiserver (the policies bound to this file's
// namespace): Quarry's MutatingAdmissionPolicy stamps
// every named request with the shard the replicas compute (CEL and TypeScript
// agree), its ValidatingAdmissionPolicy refuses any other value, and three
// replicas with QUARRY_SHARD_LABEL=on each receive only their buckets'
// requests (the apiserver filters: no event of another bucket's request
// reaches them) while every request, labelled or not, resolves once.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { LABEL_SHARD, type ResolutionRequest, shardOfName } from "@quarry/api";
import { applyObject } from "@quarry/devcluster/apply";
import { installShardPolicy } from "@quarry/devcluster/install";
import { waitUntil } from "@quarry/devcluster/wait";
import {
  allResolved,
  assertResolvedAsPredicted,
  bucketOwners,
  heldBuckets,
  predictedPerReplica,
  type Replica,
  resolvedBy,
  skippedEvents,
  startReplica,
} from "@quarry/harness/replicas";
import { createRequest, newRequest, taskManifest, useScenario } from "@quarry/harness/scenario";
import { isApiError } from "@quarry/kube";

const BUCKETS = 6;
const ENV = {
  QUARRY_BUCKETS: String(BUCKETS),
  QUARRY_SHARD_LABEL: "on",
  QUARRY_LEASE_DURATION: "4s",
  QUARRY_LEASE_RENEW_DEADLINE: "3s",
  QUARRY_LEASE_RETRY_PERIOD: "500ms",
};
const SERVICE = "cluster-resolver";
const cluster = { "resolution.tekton.dev/type": "cluster" };
const task = { kind: "task", name: "hello" };
/** A type no replica here serves: the stamping test's requests stay out of the replicas' counts. */
const unserved = { "resolution.tekton.dev/type": "stamp-only" };

/** A request made with generateName (`prefix`) instead of a name. */
function generatedRequest(
  namespace: string,
  prefix: string,
  labels: Record<string, string>,
): ResolutionRequest {
  const rr = newRequest(namespace, "x", labels, task);
  const { name: _name, ...metadata } = rr.metadata;
  return { ...rr, metadata: { ...metadata, generateName: prefix } };
}

let removeShardPolicy: (() => Promise<void>) | undefined;
const scenario = useScenario("ha-shard-label", {
  start: ["lifecycle-controller"],
  setup: async (scn) => {
    await applyObject(scn.admin, taskManifest(scn.namespace, "hello"));
    // the shipped policies, bound to this scenario's namespace only
    removeShardPolicy = await installShardPolicy(scn.admin, scn.namespace);
  },
});
after(async () => {
  await removeShardPolicy?.();
});
const replicas: Replica[] = [];

const resolved = (r: Replica) => resolvedBy(r, "cluster");

test("the apiserver stamps the shard the replicas compute, and refuses another", async () => {
  const scn = scenario();
  const batch = ["a", "build", "git-6c3f0a9e2b7d41d58e3a0f1c2b9d7e64", `long-${"x".repeat(200)}`, "z.9-q"];
  for (const name of batch) {
    const made = await createRequest(scn.admin, newRequest(scn.namespace, `stamp-${name}`, unserved, task));
    assert.equal(made.metadata.labels?.[LABEL_SHARD], String(shardOfName(`stamp-${name}`)), name);
  }
  const wrong = newRequest(scn.namespace, "stamp-wrong", { ...unserved, [LABEL_SHARD]: "7" }, task);
  const stamped = await createRequest(scn.admin, wrong);
  assert.equal(stamped.metadata.labels?.[LABEL_SHARD], String(shardOfName("stamp-wrong")), "put right");
  // a generateName create has no name at admission: unlabelled, and a label given with it is refused
  const gen = await createRequest(scn.admin, generatedRequest(scn.namespace, "stamp-gen-", unserved));
  assert.equal(gen.metadata.labels?.[LABEL_SHARD], undefined);
  const forged = generatedRequest(scn.namespace, "stamp-gen-", { ...unserved, [LABEL_SHARD]: "7" });
  await assert.rejects(createRequest(scn.admin, forged), (err) => isApiError(err, 422));
});

test("three replicas with the shard label: each receives only its buckets' requests, each request resolves once", async () => {
  const scn = scenario();
  for (const name of ["s1", "s2", "s3"]) replicas.push(await startReplica(scn, SERVICE, name, ENV));
  await waitUntil(
    "the buckets to spread over the three replicas",
    async () => {
      const held = await Promise.all(replicas.map(heldBuckets));
      return held.every((h) => h.length === BUCKETS / 3) && new Set(held.flat()).size === BUCKETS;
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
  const owner = await bucketOwners(replicas);
  const before = await Promise.all(replicas.map(resolved));
  const skippedBefore = await Promise.all(replicas.map(skippedEvents));
  const batch = Array.from({ length: 60 }, (_, i) => `shard-${i}`);
  await Promise.all(batch.map((n) => createRequest(scn.admin, newRequest(scn.namespace, n, cluster, task))));
  await allResolved(scn, batch);
  const expected = predictedPerReplica(replicas, owner, {
    service: SERVICE,
    buckets: BUCKETS,
    namespace: scn.namespace,
    batch,
  });
  const after = await Promise.all(replicas.map(resolved));
  assertResolvedAsPredicted(replicas, before, after, expected);
  // the apiserver filtered: without the label each replica skips the others' events (ha-buckets)
  const skippedAfter = await Promise.all(replicas.map(skippedEvents));
  assert.deepEqual(
    skippedAfter.map((n, i) => n - skippedBefore[i]!),
    [0, 0, 0],
    "no event of another bucket's request reached a replica",
  );
});

test("an unlabelled request (generateName) still reaches every replica's watch and resolves once", async () => {
  const scn = scenario();
  const before = await Promise.all(replicas.map(resolved));
  const made = await createRequest(scn.admin, generatedRequest(scn.namespace, "shard-gen-", cluster));
  assert.equal(made.metadata.labels?.[LABEL_SHARD], undefined);
  await allResolved(scn, [made.metadata.name!]);
  const after = await Promise.all(replicas.map(resolved));
  assert.equal(
    after.reduce((s, n, i) => s + n - before[i]!, 0),
    1,
    "resolved once",
  );
});
