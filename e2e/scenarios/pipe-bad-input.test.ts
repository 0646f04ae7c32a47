// Bad pipe input against the real apiserver and the real pipe resolver: each
// request fails at once with its own machine-readable reason
// (status.annotations["quarry.dev/reason"]) and a message naming the object,
// the field and the problem, before any pod or output is made (no node runs).
//
// Issue 9's bad-input list, and where each line is proven:
//
// | bad input                  | at admission (Quarry's CRDs)             | by the resolver, here                                     | unit                        |
// | -------------------------- | ---------------------------------------- | --------------------------------------------------------- | --------------------------- |
// | strategy missing           | cannot be: a reference, not a shape      | StrategyNotFound: a Pipe's PipeStrategy, a request's      | resolver.test "failures     |
// |                            |                                          | ClusterPipeStrategy (and PipeNotFound for the Pipe)       | before the pod"             |
// | two init containers        | pipe-crd-validation "bad strategies"     | InvalidStrategy, schemaless CRDs (private control plane)  | validate.test               |
// | a regular container        | pipe-crd-validation "bad strategies"     | InvalidStrategy, schemaless CRDs (a ClusterPipeStrategy)  | validate.test               |
// | a file outside the emptyDir| admitted (pipe-crd-validation "a file    | InvalidPipe: a Pipe's entry, a request's `files`          | validate.test "checkFiles"  |
// |                            | outside"): the CRD cannot see the mount  |                                                           |                             |
// | a key with illegal chars   | pipe-crd-validation "bad Pipes"          | InvalidPipe: a request's `files`; a Pipe under schemaless | validate.test               |
// | duplicate keys             | pipe-crd-validation "bad Pipes"          | InvalidPipe: a request's `files`; a Pipe under schemaless | validate.test               |
// | an undeclared param        | admitted: the Pipe CRD cannot see the    | UnknownParam: a request's param, a Pipe's param           | validate.test "bad input"   |
// |                            | strategy's declarations                  |                                                           |                             |
//
// A request's own `files` param is never seen by a CRD, so the resolver's
// checks are the only ones for it. Strategies and Pipes that break the CRDs'
// rules exist where the pipe CRDs lack them (an install without Quarry's
// schemas): the last test serves the same CRDs without their schemas from a
// private control plane, so the resolver meets them as it would there.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import {
  type ClusterPipeStrategy,
  clusterPipeStrategies,
  type PipeEntry,
  type PodSpec,
  pipeStrategies,
  pipes,
  QuarryReason,
  REASON_RESOLUTION_FAILED,
} from "@quarry/api";
import { applyObject } from "@quarry/devcluster/apply";
import { startControlPlane } from "@quarry/devcluster/controlplane";
import { installQuarryApi } from "@quarry/devcluster/install";
import { grantOptInRules } from "@quarry/devcluster/opt-in-rbac";
import { repoRoot } from "@quarry/devcluster/paths";
import { waitUntil } from "@quarry/devcluster/wait";
import { adminClient } from "@quarry/harness/env";
import { pods } from "@quarry/harness/node";
import {
  configMapOutputs,
  failed,
  pipeObject,
  pipeRequest,
  pipeStrategy,
  reasonOf,
  usePipeScenario,
} from "@quarry/harness/pipe-scenario";
import {
  newScenario,
  type Scenario,
  setLifecycleConfig,
  succeeded,
  waitForRequest,
} from "@quarry/harness/scenario";
import { configMaps, type KubeClient, type KubeObject, type ResourceType } from "@quarry/kube";
import yaml from "js-yaml";

/** No pod ever runs: the image is never pulled. */
function pod(extra: Partial<PodSpec> = {}): PodSpec {
  return {
    volumes: [{ name: "out", emptyDir: {} }],
    initContainers: [
      {
        name: "gen",
        image: "busybox",
        command: ["sh", "-c", "echo $(params.cn) > /out/x"],
        volumeMounts: [{ name: "out", mountPath: "/out" }],
      },
    ],
    ...extra,
  };
}

const PARAMS = [{ name: "cn" }, { name: "days", default: "1" }];
const X: PipeEntry[] = [{ file: "/out/x", kind: "ConfigMap", key: "x" }];
const files = (entries: unknown[]) => JSON.stringify(entries);
const q = (s: string) => JSON.stringify(s);

interface Case {
  name: string;
  params: Record<string, string>;
  reason: QuarryReason;
  message: (ns: string) => string;
}

/** Creates every case's request, then checks each failed as it should, and that nothing was made. */
async function assertFailures(scn: Scenario, cases: readonly Case[]): Promise<void> {
  for (const c of cases) await pipeRequest(scn, c.name, c.params);
  const wrong: string[] = [];
  for (const c of cases) {
    const rr = await waitForRequest(scn, c.name, failed, 30_000).catch((err: Error) => err);
    if (rr instanceof Error) {
      wrong.push(`${c.name}: ${rr.message}`);
      continue;
    }
    const cond = succeeded(rr);
    const want = c.message(scn.namespace);
    if (reasonOf(rr) !== c.reason || cond?.reason !== REASON_RESOLUTION_FAILED || cond?.message !== want)
      wrong.push(
        `${c.name}: got ${reasonOf(rr)}/${cond?.reason} ${q(cond?.message ?? "")}, want ${c.reason} ${q(want)}`,
      );
  }
  assert.deepEqual(wrong, []);
  // every check is made before the resolver writes anything: no pod, no receipt, no output
  assert.deepEqual((await scn.admin.list(pods, scn.namespace)).items, [], "no pod");
  const made = await scn.admin.list(configMaps, scn.namespace, { labelSelector: "quarry.dev/pipe" });
  assert.deepEqual(made.items, [], "no receipt or output");
}

/** The objects both tests read: a valid strategy and Pipe, and Pipes that only the resolver can fault. */
async function objects(scn: Scenario): Promise<void> {
  const ns = scn.namespace;
  // /out/x may be a ConfigMap, and requests may bring their own files: so each request below
  // fails on its own fault, not on the strategy's policy (e2e/hostile/cases-pipe.ts has those)
  await scn.admin.create(
    pipeStrategies,
    pipeStrategy(ns, "gen", pod(), PARAMS, { outputs: configMapOutputs("/out/x"), allowInlineFiles: true }),
  );
  const cn = [{ name: "cn", value: "example.test" }];
  const gen = { kind: "PipeStrategy" as const, name: "gen" };
  for (const p of [
    pipeObject(ns, "good", gen, X, cn),
    pipeObject(ns, "no-strategy", { kind: "PipeStrategy", name: "absent" }, X, cn),
    pipeObject(ns, "outside", gen, [{ file: "/etc/passwd", kind: "Secret", key: "passwd" }], cn),
    pipeObject(ns, "undeclared", gen, X, [...cn, { name: "colour", value: "red" }]),
  ])
    await scn.admin.create(pipes, p);
}

// with the namespace's opt-in, so "no pod, no receipt" is the resolver's choice, not RBAC's
const pipe = usePipeScenario("pipe-bad", { node: false, setup: objects });

test("under Quarry's CRDs: what admission cannot see fails in the resolver with its own reason", async () => {
  const { scn } = pipe();
  const absent = `absent-${scn.namespace}`; // no ClusterPipeStrategy of this name exists
  const own = (entries: unknown[]) => ({
    strategy: "gen",
    strategyKind: "PipeStrategy",
    files: files(entries),
    cn: "a",
  });
  const mount = `outside the emptyDir volume "out", mounted at /out (PipeStrategy "gen")`;
  const keyRule = "must match ^[a-zA-Z0-9_-]+$ and have at most 63 characters";
  await assertFailures(scn, [
    {
      name: "no-pipe",
      params: { pipe: "absent" },
      reason: QuarryReason.PipeNotFound,
      message: (ns) => `Pipe "absent" does not exist in namespace ${q(ns)}`,
    },
    {
      name: "no-strategy",
      params: { pipe: "no-strategy" },
      reason: QuarryReason.StrategyNotFound,
      message: (ns) => `PipeStrategy "absent" does not exist in namespace ${q(ns)}`,
    },
    {
      name: "no-cluster-strategy",
      params: { strategy: absent, strategyKind: "ClusterPipeStrategy", files: files(X) },
      reason: QuarryReason.StrategyNotFound,
      message: () => `ClusterPipeStrategy ${q(absent)} does not exist`,
    },
    {
      name: "outside-pipe",
      params: { pipe: "outside" },
      reason: QuarryReason.InvalidPipe,
      message: () => `Pipe "outside": spec.pipe[0].file "/etc/passwd" is ${mount}`,
    },
    {
      name: "outside-files",
      params: own([{ envFile: "/tmp/build.env", kind: "Secret", key: "env" }]),
      reason: QuarryReason.InvalidPipe,
      message: () => `request: param "files"[0].envFile "/tmp/build.env" is ${mount}`,
    },
    {
      name: "bad-key",
      params: own([{ file: "/out/tls.key", kind: "Secret", key: "tls/key" }]),
      reason: QuarryReason.InvalidPipe,
      message: () => `param "files"[0].key "tls/key" ${keyRule}`,
    },
    {
      name: "duplicate-keys",
      params: own([
        { file: "/out/a", kind: "ConfigMap", key: "k" },
        { file: "/out/b", kind: "Secret", key: "k" },
      ]),
      reason: QuarryReason.InvalidPipe,
      message: () => `param "files"[1].key "k" is also the key of param "files"[0]; keys must be unique`,
    },
    {
      name: "undeclared-request-param",
      params: { pipe: "good", colour: "red" },
      reason: QuarryReason.UnknownParam,
      message: () => `PipeStrategy "gen": param "colour" is not declared (declared: "cn", "days")`,
    },
    {
      name: "undeclared-pipe-param",
      params: { pipe: "undeclared" },
      reason: QuarryReason.UnknownParam,
      message: () => `PipeStrategy "gen": param "colour" is not declared (declared: "cn", "days")`,
    },
  ]);
});

const PIPE_CRDS = ["pipes", "pipestrategies", "clusterpipestrategies"].map((p) =>
  join(repoRoot, "libs", "api", "crds", `${p}.quarry.dev.yaml`),
);

/** Serves Quarry's pipe CRDs with their schemas (and so their CEL rules) taken out. */
async function serveWithoutSchemas(admin: KubeClient): Promise<void> {
  for (const file of PIPE_CRDS)
    for (const doc of yaml.loadAll(readFileSync(file, "utf8")) as KubeObject[]) {
      if (doc?.kind !== "CustomResourceDefinition") continue;
      const crd = doc as KubeObject & { spec: { versions: Record<string, unknown>[] } };
      for (const v of crd.spec.versions)
        v.schema = { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } };
      await applyObject(admin, crd);
    }
}

/** Creates `obj` once its CRD no longer refuses it (a CRD's new schema takes a moment to be served). */
function createWhenAdmitted(scn: Scenario, rt: ResourceType, obj: KubeObject): Promise<KubeObject> {
  return waitUntil(`${obj.kind} ${obj.metadata.name} admitted`, () => scn.admin.create(rt, obj), {
    timeoutMs: 30_000,
    intervalMs: 250,
  });
}

test("where the pipe CRDs have no schemas: KEP-17-breaking strategies and Pipes fail in the resolver", {
  timeout: 180_000,
}, async () => {
  // Quarry's CRDs on the shared control plane refuse these objects: a private one serves the
  // pipe CRDs without schemas
  const cp = await startControlPlane();
  const info = { server: cp.server, caFile: cp.caFile, dir: cp.dir, adminKubeconfig: cp.adminKubeconfig };
  let scn: Scenario | undefined;
  try {
    await installQuarryApi(adminClient(info));
    await serveWithoutSchemas(adminClient(info));
    scn = await newScenario("pipe-bad-schemaless", { cp: info });
    const ns = scn.namespace;
    await setLifecycleConfig(scn, { "default-maximum-resolution-timeout": "5m" });
    await grantOptInRules(scn, {
      service: "pipe-resolver",
      rulesKey: "pipeNamespaceRules",
      role: "quarry-pipe-resolver-namespace",
    });
    const init = pod().initContainers![0]!;
    await createWhenAdmitted(
      scn,
      pipeStrategies,
      pipeStrategy(ns, "two-inits", pod({ initContainers: [init, { ...init, name: "second" }] }), PARAMS),
    );
    const aContainer = `a-container-${ns}`;
    const cluster: ClusterPipeStrategy = {
      apiVersion: "quarry.dev/v1alpha1",
      kind: "ClusterPipeStrategy",
      metadata: { name: aContainer },
      spec: { params: PARAMS, pod: pod({ containers: [{ name: "main", image: "busybox" }] }) },
    };
    await createWhenAdmitted(scn, clusterPipeStrategies, cluster);
    const cn = [{ name: "cn", value: "example.test" }];
    const gen = { kind: "PipeStrategy" as const, name: "gen" };
    await objects(scn);
    for (const p of [
      pipeObject(ns, "two-inits", { kind: "PipeStrategy", name: "two-inits" }, X, cn),
      pipeObject(ns, "bad-key", gen, [{ file: "/out/tls.key", kind: "Secret", key: "tls/key" }], cn),
      pipeObject(
        ns,
        "duplicate-keys",
        gen,
        [
          { file: "/out/a", kind: "ConfigMap", key: "k" },
          { file: "/out/b", kind: "Secret", key: "k" },
        ],
        cn,
      ),
    ])
      await createWhenAdmitted(scn, pipes, p);
    await scn.start("lifecycle-controller");
    await scn.start("pipe-resolver");

    await assertFailures(scn, [
      {
        name: "two-inits",
        params: { pipe: "two-inits" },
        reason: QuarryReason.InvalidStrategy,
        message: () =>
          `PipeStrategy "two-inits": spec.pod.initContainers has 2 containers; a pipe pod needs exactly one init container, the one that writes the piped files`,
      },
      {
        name: "a-container",
        params: { strategy: aContainer, strategyKind: "ClusterPipeStrategy", files: files(X), cn: "a" },
        reason: QuarryReason.InvalidStrategy,
        message: () =>
          `ClusterPipeStrategy ${q(aContainer)}: spec.pod.containers has 1 container; a pipe pod has none of its own (Quarry adds the one that waits while the files are copied)`,
      },
      {
        name: "bad-key",
        params: { pipe: "bad-key" },
        reason: QuarryReason.InvalidPipe,
        message: () =>
          `Pipe "bad-key": spec.pipe[0].key "tls/key" must match ^[a-zA-Z0-9_-]+$ and have at most 63 characters`,
      },
      {
        name: "duplicate-keys",
        params: { pipe: "duplicate-keys" },
        reason: QuarryReason.InvalidPipe,
        message: () =>
          `Pipe "duplicate-keys": spec.pipe[1].key "k" is also the key of spec.pipe[0]; keys must be unique`,
      },
    ]);
  } finally {
    await scn?.cleanup();
    await cp.stop();
  }
});
