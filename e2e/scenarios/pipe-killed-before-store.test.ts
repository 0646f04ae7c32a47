// quarry-e2e: needs-node
//
// The pipe resolver SIGKILLed after it copied a pipe's files out of the pod
// and before it stored them, then started again: each request completes with
// one object per key, holding what the init container wrote, and no pod left.
// (The replays the receipt makes safe are unit-tested step by step in
// services/pipe-resolver/src/resolver.test.ts, "replays: ...".)
//
// What holds the resolver in that window is the apiserver itself: a
// ValidatingAdmissionPolicy denies creating chosen output objects with reason
// Invalid (422), which the resolver takes as transient (store() fails only
// 403 and 409 for good) and retries, copying again each time. So the kill
// lands with the copy done and the store refused, seen in the resolver's own
// log, and the restarted process finds whatever the dead one left:
//
//   first-1    its first output (a Secret) refused: nothing stored, no receipt
//   second-1   its Secret stored and recorded in the receipt, its ConfigMap
//              refused: the restart must skip the Secret (it may not read it)
//              and create only the ConfigMap
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { pipeStrategies, pipes, type ResolutionRequest } from "@quarry/api";
import { kinds } from "@quarry/devcluster/kinds";
import { waitUntil } from "@quarry/devcluster/wait";
import { pods, readFileFromPod } from "@quarry/harness/node";
import {
  configMapOutputs,
  isGone,
  keyedDigest,
  type PipeResult,
  pipeObject,
  pipeRequest,
  pipeStrategy,
  resultsOf,
  scriptPod,
  sha256,
  usePipeScenario,
  watchPipePods,
} from "@quarry/harness/pipe-scenario";
import { finished, resolvedOk, type Scenario, waitForRequest } from "@quarry/harness/scenario";
import { configMaps, isApiError, type KubeObject, secrets } from "@quarry/kube";

// random each run, so a stored value can only have come from this pod's files
const SCRIPT = [
  "set -e",
  "head -c 32 /dev/urandom | base64 > /out/key",
  "head -c 32 /dev/urandom | base64 > /out/conf",
].join("\n");

const HELD_MESSAGE = "held by the pipe-killed-before-store scenario";
/** Output names are <owner>-<pipe>-<key>; a request with no controller owner owns its outputs. */
const HELD = ["first-1-two-key", "second-1-two-conf"];
/** Creating it shows whether the policy is in force (the apiserver loads policies asynchronously). */
const PROBE = "probe-held";

const pipe = usePipeScenario("pipe-killed", {
  node: true,
  // the default 5 attempts (about 8 s of backoff) could run out while the test holds the store
  config: { "max-attempts": "1000" },
  setup: async (scn, node) => {
    await scn.admin.create(
      pipeStrategies,
      pipeStrategy(scn.namespace, "gen", scriptPod(node!.toolsImage, SCRIPT), [], {
        outputs: configMapOutputs("/out/conf"),
      }),
    );
    await scn.admin.create(
      pipes,
      pipeObject(scn.namespace, "two", { kind: "PipeStrategy", name: "gen" }, [
        { file: "/out/key", kind: "Secret", key: "key" },
        { file: "/out/conf", kind: "ConfigMap", key: "conf" },
      ]),
    );
  },
});

const policyName = () => `pipe-killed-${pipe().scn.namespace}`;
after(async () => {
  // also when a test failed while holding (and harmless when setup failed before it held)
  await Promise.resolve()
    .then(() => release(pipe().scn))
    .catch(() => {});
});

/** Denies creating the held names (and the probe) in the scenario's namespace only. */
async function hold(scn: Scenario): Promise<void> {
  const names = [...HELD, PROBE].map((n) => `'${n}'`).join(", ");
  await scn.admin.create(kinds.ValidatingAdmissionPolicy!, {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicy",
    metadata: { name: policyName() },
    spec: {
      failurePolicy: "Fail",
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: [""],
            apiVersions: ["v1"],
            operations: ["CREATE"],
            resources: ["configmaps", "secrets"],
          },
        ],
      },
      // Invalid (422), not Forbidden (403): the resolver fails a 403 for good, as RBAC's answer
      validations: [
        { expression: `!(object.metadata.name in [${names}])`, reason: "Invalid", message: HELD_MESSAGE },
      ],
    },
  } as KubeObject);
  await scn.admin.create(kinds.ValidatingAdmissionPolicyBinding!, {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicyBinding",
    metadata: { name: policyName() },
    spec: {
      policyName: policyName(),
      validationActions: ["Deny"],
      matchResources: {
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": scn.namespace } },
      },
    },
  } as KubeObject);
  await waitUntil("the policy in force", () => probe(scn).then((admitted) => !admitted), {
    timeoutMs: 30_000,
  });
}

async function release(scn: Scenario): Promise<void> {
  for (const rt of [kinds.ValidatingAdmissionPolicyBinding!, kinds.ValidatingAdmissionPolicy!])
    await scn.admin.delete(rt, undefined, policyName()).catch((err: unknown) => {
      if (!isApiError(err, 404)) throw err;
    });
}

/** True when the probe ConfigMap is admitted (and deletes it again); false when the policy denies it. */
async function probe(scn: Scenario): Promise<boolean> {
  try {
    await scn.admin.create(configMaps, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: PROBE, namespace: scn.namespace },
    } as KubeObject);
  } catch (err) {
    if (isApiError(err, 422) && err.message.includes(HELD_MESSAGE)) return false;
    throw err;
  }
  await scn.admin.delete(configMaps, scn.namespace, PROBE);
  return true;
}

/** The resolver's log says a step was refused creating `name`: it had copied the files by then. */
function refused(log: string, name: string): boolean {
  return log
    .split("\n")
    .some((l) => l.includes("resolution failed, will retry") && l.includes(name) && l.includes(HELD_MESSAGE));
}

type Receipt = KubeObject & { data?: Record<string, string> };
type Output = KubeObject & { data?: Record<string, string>; binaryData?: Record<string, string> };

/** The outputs the request has in its namespace, receipts aside, by pipe key. */
async function outputsOf(scn: Scenario, request: string): Promise<Map<string, Output[]>> {
  const selector = { labelSelector: `quarry.dev/request=${request},!quarry.dev/pipe-receipt` };
  const found = [
    ...(await scn.admin.list<Output>(secrets, scn.namespace, selector)).items,
    ...(await scn.admin.list<Output>(configMaps, scn.namespace, selector)).items,
  ];
  const byKey = new Map<string, Output[]>();
  for (const o of found) {
    const key = o.metadata.annotations?.["quarry.dev/pipe-key"] ?? "";
    byKey.set(key, [...(byKey.get(key) ?? []), o]);
  }
  return byKey;
}

test("killed between copy and store, restarted: one object per key, the pod's bytes, no pod left", {
  timeout: 240_000,
}, async () => {
  const { scn, resolver } = pipe();
  const ns = scn.namespace;
  await hold(scn);
  const watch = watchPipePods(scn);
  const requests = ["first-1", "second-1"];
  for (const r of requests) await pipeRequest(scn, r, { pipe: "two" });

  await waitUntil(
    "the resolver refused at the store of each request",
    () => HELD.every((n) => refused(resolver.logs(), n)),
    { timeoutMs: 150_000, intervalMs: 100 },
  );
  // where each request stands when the resolver dies
  const podOf = await waitUntil("both pods seen by the watch", () => {
    const m = new Map(
      watch.events.map((e) => [e.pod.metadata.labels?.["quarry.dev/request"], e.pod.metadata.name!]),
    );
    return requests.every((r) => m.has(r)) ? m : undefined;
  });
  const firstReceipt = podOf.get("first-1")!;
  assert.ok(await isGone(scn, configMaps, ns, firstReceipt), "first-1: no receipt, nothing recorded");
  assert.equal((await outputsOf(scn, "first-1")).size, 0, "first-1: nothing stored");
  const receipt = await scn.admin.get<Receipt>(configMaps, ns, podOf.get("second-1")!);
  assert.equal(receipt.data?.state, "storing");
  assert.deepEqual(
    [...(await outputsOf(scn, "second-1")).keys()],
    ["key"],
    "second-1: its Secret stored, its ConfigMap not",
  );

  // what the init containers wrote, read by the test through exec, before anything more happens
  const written = new Map<string, { key: Buffer; conf: Buffer }>();
  for (const r of requests) {
    const read = (path: string) => readFileFromPod(scn.cp, ns, podOf.get(r)!, "quarry-wait", path);
    written.set(r, { key: await read("/out/key"), conf: await read("/out/conf") });
  }

  resolver.kill("SIGKILL");
  assert.equal((await resolver.exited).signal, "SIGKILL");
  for (const r of requests) {
    const rr = await waitForRequest(scn, r, () => true);
    assert.ok(!finished(rr), `${r} finished before the restart: ${JSON.stringify(rr.status)}`);
  }
  await release(scn);
  await waitUntil("the policy gone", () => probe(scn), { timeoutMs: 30_000 });
  await scn.start("pipe-resolver");

  for (const r of requests) {
    const rr: ResolutionRequest = await waitForRequest(scn, r, finished, 90_000);
    assert.ok(resolvedOk(rr), `${r}: ${JSON.stringify(rr.status)}`);
    const results = resultsOf(rr);
    assert.deepEqual(
      results.map((x) => [x.key, x.kind, x.name]),
      [
        ["key", "Secret", `${r}-two-key`],
        ["conf", "ConfigMap", `${r}-two-conf`],
      ],
    );
    const outputs = await outputsOf(scn, r);
    assert.deepEqual([...outputs.keys()].sort(), ["conf", "key"], `${r}: an object per key, nothing else`);
    const bytes = (res: PipeResult, file: "key" | "conf") => {
      const found = outputs.get(res.key)!;
      assert.equal(found.length, 1, `${r}: exactly one object for key ${res.key}`);
      assert.equal(found[0]!.metadata.name, res.name);
      const b64 = res.kind === "Secret" ? found[0]!.data?.[file] : found[0]!.binaryData?.[file];
      return Buffer.from(b64 ?? "", "base64");
    };
    const key = bytes(results[0]!, "key");
    const conf = bytes(results[1]!, "conf");
    assert.deepEqual(key, written.get(r)!.key, `${r}: the Secret holds the pod's file`);
    assert.deepEqual(conf, written.get(r)!.conf, `${r}: the ConfigMap holds the pod's file`);
    // the Secret's digest is keyed (its plain SHA-256 would let a reader test guesses)
    assert.equal(results[0]!.hmacSha256, await keyedDigest(scn, key));
    assert.equal(results[0]!.sha256, undefined);
    assert.equal(results[1]!.sha256, sha256(conf));
    const stored = await scn.admin.get<Receipt>(configMaps, ns, podOf.get(r)!);
    assert.equal(stored.data?.state, "stored", `${r}: receipt`);
  }

  await waitUntil(
    "the pipe pods gone",
    async () => (await scn.admin.list(pods, ns, { labelSelector: "quarry.dev/pipe" })).items.length === 0,
    { timeoutMs: 30_000, intervalMs: 250 },
  );
  watch.stop();
  for (const r of requests) {
    const uids = new Set(
      watch.events
        .filter((e) => e.pod.metadata.labels?.["quarry.dev/request"] === r)
        .map((e) => e.pod.metadata.uid),
    );
    assert.equal(uids.size, 1, `${r}: one pod across both processes, never a second`);
  }
});
