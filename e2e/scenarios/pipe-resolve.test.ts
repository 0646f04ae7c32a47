// quarry-e2e: needs-node
//
// The pipe resolver on a real node: its pipe pods run (openssl in an init
// container of the node's tools image, busybox as quarry-wait), the files come
// back through the exec subresource (apiserver -> kubelet -> containerd) as
// `tar cf -`, and become a Secret and ConfigMaps owned by the request's owner;
// the pod is deleted. The resolver runs as its own process under its shipped
// RBAC (with the namespace's opt-in), so what it may and may not do is the
// chart's: create Secrets but never read one, exec only where the namespace
// opted in.
import assert from "node:assert/strict";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { after, test } from "node:test";
import {
  type ClusterPipeStrategy,
  clusterPipeStrategies,
  type Pipe,
  type PipeStrategy,
  type PodSpec,
  pipeStrategies,
  pipes,
} from "@quarry/api";
import { grantOptInRules } from "@quarry/devcluster/opt-in-rbac";
import type { RunningService } from "@quarry/devcluster/service";
import { waitUntil } from "@quarry/devcluster/wait";
import { assertNoLeak } from "@quarry/harness/leaks";
import { type Pod, pods, type SharedNode, sharedNode } from "@quarry/harness/node";
import {
  failed,
  isGone,
  keyedDigest,
  type PipeResult as Result,
  reasonOf,
  sha256,
  watchPipePods,
} from "@quarry/harness/pipe-scenario";
import {
  createRequest,
  dataOf,
  getRequest,
  newRequest,
  resolvedOk,
  type Scenario,
  setConfig,
  succeeded,
  useScenario,
  waitForRequest,
} from "@quarry/harness/scenario";
import { configMaps, type KubeObject, secrets } from "@quarry/kube";
import yaml from "js-yaml";

const PIPE = { "resolution.tekton.dev/type": "pipe" };
const TOKEN = "s3cr3t-e2e-token-7f3a";
const MiB = 1024 * 1024;
const PENDING_TIMEOUT_S = 45;
/** Pods start, run openssl and are copied from well within this (the node runs several at once). */
const RESOLVE_TIMEOUT_MS = 150_000;

let node: SharedNode;
let resolver: RunningService;
const clusterStrategy = `pipe-e2e-${process.pid}-${Date.now().toString(36)}`;

const scenario = useScenario("pipe-resolve", {
  start: ["lifecycle-controller"],
  // a pipe request lives longer than the default 1m global timeout allows
  lifecycleConfig: { "default-maximum-resolution-timeout": "5m" },
  setup: async (scn) => {
    node = await sharedNode();
    await setConfig(scn, "pipe-resolver-config", {
      "pending-timeout": `${PENDING_TIMEOUT_S}s`,
      "wait-image": node.toolsImage,
      "wait-image-pull-policy": "Never",
      "host-network": "true",
      "node-name": node.name,
      tolerations: "- key: node.kubernetes.io/not-ready\n  operator: Exists\n",
      // the strategies' ServiceAccount: the pod policy allows only `default` unless told
      "allowed-service-accounts": "pipe-sa",
    });
    await grantOptInRules(scn, {
      service: "pipe-resolver",
      rulesKey: "pipeNamespaceRules",
      role: "quarry-pipe-resolver-namespace",
    });
    resolver = await scn.start("pipe-resolver");
    await objects(scn);
  },
});
after(async () => {
  await scenario()
    .admin.delete(clusterPipeStrategies, undefined, clusterStrategy)
    .catch(() => {});
});

/** What every pod on the test node needs, and a 1 s grace period (sleep ignores SIGTERM). */
function podSpec(script: string, image?: string): PodSpec {
  return {
    serviceAccountName: "pipe-sa",
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    terminationGracePeriodSeconds: 1,
    volumes: [{ name: "out", emptyDir: {} }],
    initContainers: [
      {
        name: "gen",
        image: image ?? node.toolsImage,
        imagePullPolicy: "Never",
        command: ["sh", "-c", script],
        volumeMounts: [{ name: "out", mountPath: "/out" }],
      },
    ],
  };
}

const GEN_SCRIPT = [
  "set -e",
  "openssl req -x509 -newkey rsa:2048 -nodes -days $(params.days) -subj /CN=$(params.cn) -keyout /out/tls.key -out /out/tls.crt 2>/dev/null",
  `printf '# build\\nMODE=release\\nTOKEN=${TOKEN}\\n' > /out/build.env`,
  "printf 'A=1\\nnot a pair\\n' > /out/bad.env",
  `head -c ${MiB + 1} /dev/zero > /out/big`,
  `head -c ${MiB} /dev/urandom > /out/exact`,
  "mkdir /out/dir",
].join("\n");

/** Files the strategies may store as ConfigMaps (the key and the envFile only as Secrets). */
const PUBLIC_FILES = [
  "/out/tls.crt",
  "/out/exact",
  "/out/big",
  "/out/bad.env",
  "/out/dir",
  "/out/nope",
  "/out/x",
];

function strategy(
  namespace: string,
  name: string,
  pod: PodSpec,
  annotations: Record<string, string> = {},
): PipeStrategy {
  return {
    apiVersion: "quarry.dev/v1alpha1",
    kind: "PipeStrategy",
    metadata: { name, namespace, annotations },
    spec: {
      params: [{ name: "cn" }, { name: "days", default: "1" }],
      pod,
      outputs: PUBLIC_FILES.map((path) => ({ path, kind: "ConfigMap" as const })),
    },
  };
}

function pipe(namespace: string, name: string, strategyName: string, entries: Pipe["spec"]["pipe"]): Pipe {
  return {
    apiVersion: "quarry.dev/v1alpha1",
    kind: "Pipe",
    metadata: { name, namespace },
    spec: {
      strategy: { kind: "PipeStrategy", name: strategyName },
      params: [{ name: "cn", value: "api.example.test" }],
      pipe: entries,
    },
  };
}

let setUp: Promise<void> | undefined;
/** The strategies and Pipes every test reads, made once. */
function objects(scn: Scenario): Promise<void> {
  setUp ??= (async () => {
    const ns = scn.namespace;
    await scn.admin.create(
      pipeStrategies,
      strategy(ns, "gen", podSpec(GEN_SCRIPT), {
        "example.com/team": "a",
        "kubectl.kubernetes.io/last-applied-configuration": '{"kind":"PipeStrategy"}',
        "quarry.dev/note": "reserved",
        "pipestrategy.quarry.dev/x": "reserved",
        "resolution.tekton.dev/y": "reserved",
      }),
    );
    await scn.admin.create(
      pipeStrategies,
      strategy(ns, "no-image", podSpec("true", "quarry.local/e2e/absent:local")),
    );
    await scn.admin.create(pipeStrategies, strategy(ns, "slow", podSpec("sleep 600")));
    const asResolver = podSpec("true");
    asResolver.serviceAccountName = "quarry-pipe-resolver";
    await scn.admin.create(pipeStrategies, strategy(ns, "as-resolver", asResolver));
    const cluster: ClusterPipeStrategy = {
      apiVersion: "quarry.dev/v1alpha1",
      kind: "ClusterPipeStrategy",
      metadata: { name: clusterStrategy },
      spec: {
        params: [{ name: "greeting" }],
        pod: podSpec("echo '$(params.greeting)' > /out/hello"),
        // the scenario's namespace only, requests' own files allowed, /out/hello not secret
        allowedNamespaces: [ns],
        allowInlineFiles: true,
        outputs: [{ path: "/out/hello", kind: "ConfigMap" }],
      },
    };
    await scn.admin.create(clusterPipeStrategies, cluster);
    const entries: Record<string, Pipe["spec"]["pipe"]> = {
      cert: [
        { file: "/out/tls.key", kind: "Secret", key: "tls-key" },
        { file: "/out/tls.crt", kind: "ConfigMap", key: "tls-crt" },
        { envFile: "/out/build.env", kind: "Secret", key: "env" },
      ],
      exact: [{ file: "/out/exact", kind: "ConfigMap", key: "exact" }],
      missing: [
        { file: "/out/tls.crt", kind: "ConfigMap", key: "crt" },
        { file: "/out/nope", kind: "ConfigMap", key: "nope" },
      ],
      big: [{ file: "/out/big", kind: "ConfigMap", key: "big" }],
      "bad-env": [{ envFile: "/out/bad.env", kind: "ConfigMap", key: "env" }],
      dir: [{ file: "/out/dir", kind: "ConfigMap", key: "dir" }],
    };
    for (const [name, e] of Object.entries(entries)) await scn.admin.create(pipes, pipe(ns, name, "gen", e));
    await scn.admin.create(
      pipes,
      pipe(ns, "no-image", "no-image", [{ file: "/out/x", kind: "ConfigMap", key: "x" }]),
    );
    await scn.admin.create(
      pipes,
      pipe(ns, "slow", "slow", [{ file: "/out/x", kind: "ConfigMap", key: "x" }]),
    );
    await scn.admin.create(
      pipes,
      pipe(ns, "as-resolver", "as-resolver", [{ file: "/out/x", kind: "ConfigMap", key: "x" }]),
    );
  })();
  return setUp;
}

async function request(scn: Scenario, name: string, params: Record<string, string>, owner?: KubeObject) {
  const rr = newRequest(scn.namespace, name, PIPE, params);
  if (owner)
    rr.metadata.ownerReferences = [
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        name: owner.metadata.name!,
        uid: owner.metadata.uid!,
        controller: true,
      },
    ];
  await createRequest(scn.admin, rr);
}

test("a certificate, its key and an envFile in one pipe: a Secret and ConfigMaps owned by the run, the pod gone", async () => {
  const scn = scenario();
  const ns = scn.namespace;
  const watch = watchPipePods(scn);
  // stands for the Run that owns the request: the outputs belong to it
  const run = await scn.admin.create<KubeObject>(configMaps, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "run-1", namespace: ns },
  } as KubeObject);
  await request(scn, "cert-1", { pipe: "cert" }, run);
  const rr = await waitForRequest(scn, "cert-1", (r) => resolvedOk(r) || failed(r), RESOLVE_TIMEOUT_MS);
  assert.ok(resolvedOk(rr), `resolved: ${JSON.stringify(rr.status)}`);
  assert.equal(rr.status?.annotations?.["resolution.tekton.dev/content-type"], "application/x-yaml");
  const data = yaml.load(dataOf(rr)) as Result[];
  assert.deepEqual(
    data.map((d) => [d.key, d.kind, d.name]),
    [
      ["tls-key", "Secret", "run-1-cert-tls-key"],
      ["tls-crt", "ConfigMap", "run-1-cert-tls-crt"],
      ["env", "Secret", "run-1-cert-env"],
    ],
  );

  const owner = [{ apiVersion: "v1", kind: "ConfigMap", name: "run-1", uid: run.metadata.uid }];
  const key = await scn.admin.get<KubeObject & { type: string; data: Record<string, string> }>(
    secrets,
    ns,
    "run-1-cert-tls-key",
  );
  const crt = await scn.admin.get<KubeObject & { binaryData: Record<string, string> }>(
    configMaps,
    ns,
    "run-1-cert-tls-crt",
  );
  const env = await scn.admin.get<KubeObject & { data: Record<string, string> }>(
    secrets,
    ns,
    "run-1-cert-env",
  );
  for (const o of [key, crt, env]) {
    assert.deepEqual(o.metadata.ownerReferences, owner, `${o.metadata.name} is the run's`);
    assert.equal(o.metadata.labels?.["app.kubernetes.io/managed-by"], "quarry");
    assert.equal(o.metadata.labels?.["quarry.dev/pipe"], "cert");
  }
  assert.equal(key.type, "Opaque");
  const keyPem = Buffer.from(key.data["tls.key"]!, "base64");
  const crtPem = Buffer.from(crt.binaryData["tls.crt"]!, "base64");
  const cert = new X509Certificate(crtPem);
  assert.equal(cert.subject, "CN=api.example.test", "the Pipe's param reached openssl");
  assert.ok(
    cert.checkPrivateKey(createPrivateKey(keyPem)),
    "the Secret's key signs for the ConfigMap's certificate",
  );
  assert.deepEqual(
    Object.fromEntries(Object.entries(env.data).map(([k, v]) => [k, Buffer.from(v, "base64").toString()])),
    { MODE: "release", TOKEN },
  );
  // a ConfigMap's digest is its SHA-256; a Secret's is keyed (its plain SHA-256 would let anyone who
  // reads the request test guesses of a short secret), under the resolver's own key
  assert.equal(data[0]!.hmacSha256, await keyedDigest(scn, keyPem));
  assert.equal(data[1]!.sha256, sha256(crtPem));
  assert.equal(
    data[2]!.hmacSha256,
    await keyedDigest(scn, Buffer.from(`# build\nMODE=release\nTOKEN=${TOKEN}\n`)),
  );
  assert.deepEqual(
    [data[0]!.sha256, data[2]!.sha256],
    [undefined, undefined],
    "no plain SHA-256 of a Secret anywhere",
  );
  assert.doesNotMatch(JSON.stringify(rr.status), new RegExp(sha256(keyPem)));

  // the pod, as it ran (captured through the watch before it was deleted)
  await waitUntil(
    "the pipe pod deleted",
    async () => {
      const names = new Set(watch.events.map((e) => e.pod.metadata.name));
      for (const n of names) if (!(await isGone(scn, pods, ns, n!))) return false;
      return names.size > 0;
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
  watch.stop();
  const mine = watch.events.filter((e) => e.pod.metadata.labels?.["quarry.dev/request"] === "cert-1");
  const uids = new Set(mine.map((e) => e.pod.metadata.uid));
  assert.equal(uids.size, 1, "one pod for the request, never a second");
  const pod = mine[0]!.pod;
  assert.match(pod.metadata.name!, /^cert-1-pipe-[0-9a-f]{10}$/);
  assert.deepEqual(
    pod.metadata.annotations,
    { "example.com/team": "a" },
    "the strategy's annotations minus last-applied and Quarry's prefixes",
  );
  assert.deepEqual(pod.metadata.labels, {
    "quarry.dev/pipe": "cert",
    "quarry.dev/request": "cert-1",
    "app.kubernetes.io/managed-by": "quarry",
  });
  assert.deepEqual(
    pod.metadata.ownerReferences?.map((o) => [o.kind, o.name, o.controller]),
    [["ResolutionRequest", "cert-1", true]],
  );
  assert.equal(pod.spec.serviceAccountName, "pipe-sa", "the strategy's ServiceAccount, not the resolver's");
  assert.deepEqual(
    pod.spec.containers.map((c) => [c.name, c.image, c.volumeMounts]),
    [["quarry-wait", node.toolsImage, [{ name: "out", mountPath: "/out", readOnly: true }]]],
  );
  assert.equal(pod.spec.nodeName, node.name);
  assert.equal(pod.spec.hostNetwork, true);
  assert.deepEqual(pod.spec.initContainers?.[0]?.command?.slice(0, 2), ["sh", "-c"]);
  assert.match(pod.spec.initContainers?.[0]?.command?.[2] ?? "", /-days 1 -subj \/CN=api\.example\.test /);
  assert.ok(
    mine.some((e) => e.pod.status?.initContainerStatuses?.[0]?.state?.terminated?.exitCode === 0),
    "the init container ran to 0",
  );

  const receipt = await scn.admin.get<KubeObject & { data: Record<string, string> }>(
    configMaps,
    ns,
    pod.metadata.name!,
  );
  assert.equal(receipt.data.state, "stored");

  // no secret in the request, Events or the resolver's log
  const keyBody = keyPem.toString().split("\n")[2]!;
  assert.ok(keyBody.length > 40);
  await assertNoLeak(scn, resolver, [keyBody, TOKEN, key.data["tls.key"]!.slice(20, 80)], ["cert-1"]);
});

test("a request with its own strategy and files: a ClusterPipeStrategy, a param from the request", async () => {
  const scn = scenario();
  await request(scn, "inline-1", {
    strategy: clusterStrategy,
    strategyKind: "ClusterPipeStrategy",
    files: "[{file: /out/hello, kind: ConfigMap, key: hello}]",
    greeting: "hi from the request",
  });
  const rr = await waitForRequest(scn, "inline-1", (r) => resolvedOk(r) || failed(r), RESOLVE_TIMEOUT_MS);
  assert.ok(resolvedOk(rr), JSON.stringify(rr.status));
  const name = `inline-1-${clusterStrategy}-hello`;
  assert.deepEqual(
    (yaml.load(dataOf(rr)) as Result[]).map((d) => d.name),
    [name],
  );
  const cm = await scn.admin.get<KubeObject & { binaryData: Record<string, string> }>(
    configMaps,
    scn.namespace,
    name,
  );
  assert.equal(Buffer.from(cm.binaryData.hello!, "base64").toString(), "hi from the request\n");
  assert.deepEqual(
    cm.metadata.ownerReferences?.map((o) => [o.kind, o.name]),
    [["ResolutionRequest", "inline-1"]],
  );
});

test("exactly 1 MiB is piped; a file one byte over is refused; missing files, directories and bad envFiles fail by name", async () => {
  const scn = scenario();
  const cases: { name: string; pipe: string; reason?: string; message?: RegExp }[] = [
    { name: "exact-1", pipe: "exact" },
    {
      name: "big-1",
      pipe: "big",
      reason: "TooLarge",
      message:
        /^file "\/out\/big" \(key "big"\) has 1048577 bytes; at most 1048576 \(1 MiB\) may be piped, so it was not copied$/,
    },
    {
      name: "missing-1",
      pipe: "missing",
      reason: "NotFound",
      message:
        /^file "\/out\/nope" \(key "nope"\) does not exist in pipe pod "[^"]+\/missing-1-pipe-[0-9a-f]{10}": the init container did not write it$/,
    },
    {
      name: "dir-1",
      pipe: "dir",
      reason: "InvalidPipe",
      message: /^file "\/out\/dir" \(key "dir"\) is a directory in pipe pod .*, not a regular file$/,
    },
    {
      name: "bad-env-1",
      pipe: "bad-env",
      reason: "InvalidEnvFile",
      message: /^envFile "\/out\/bad.env" \(key "env"\): line 2 is not KEY=VALUE \(it has no "="\)$/,
    },
  ];
  await Promise.all(cases.map((c) => request(scn, c.name, { pipe: c.pipe })));
  for (const c of cases) {
    const rr = await waitForRequest(scn, c.name, (r) => resolvedOk(r) || failed(r), RESOLVE_TIMEOUT_MS);
    if (!c.reason) {
      assert.ok(resolvedOk(rr), `${c.name}: ${JSON.stringify(rr.status)}`);
      const [d] = yaml.load(dataOf(rr)) as Result[];
      const cm = await scn.admin.get<KubeObject & { binaryData: Record<string, string> }>(
        configMaps,
        scn.namespace,
        d!.name,
      );
      const bytes = Buffer.from(cm.binaryData.exact!, "base64");
      assert.equal(bytes.length, MiB);
      assert.equal(sha256(bytes), d!.sha256);
      continue;
    }
    assert.equal(reasonOf(rr), c.reason, `${c.name}: ${JSON.stringify(rr.status)}`);
    assert.match(succeeded(rr)?.message ?? "", c.message!, c.name);
  }
  // nothing stored for a failed pipe, and its pod is deleted
  assert.ok(
    await isGone(scn, configMaps, scn.namespace, "missing-1-missing-crt"),
    "no output of a pipe that failed",
  );
  await waitUntil(
    "the failed requests' pods deleted",
    async () => {
      const left = (await scn.admin.list<Pod>(pods, scn.namespace, { labelSelector: "quarry.dev/pipe" }))
        .items;
      return left.every((p) => !cases.some((c) => p.metadata.labels?.["quarry.dev/request"] === c.name));
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
});

test("a pod that cannot run fails at once; one whose init container outlasts pending-timeout fails then; never as the resolver", async () => {
  const scn = scenario();
  await request(scn, "no-image-1", { pipe: "no-image" });
  await request(scn, "slow-1", { pipe: "slow" });
  await request(scn, "as-resolver-1", { pipe: "as-resolver" });

  const asResolver = await waitForRequest(scn, "as-resolver-1", failed, 30_000);
  assert.equal(reasonOf(asResolver), "InvalidStrategy");
  assert.match(
    succeeded(asResolver)?.message ?? "",
    /may not run as the pipe resolver's own ServiceAccount "quarry-pipe-resolver"/,
  );

  const noImage = await waitForRequest(scn, "no-image-1", failed, 60_000);
  assert.equal(reasonOf(noImage), "PodFailed");
  assert.match(
    succeeded(noImage)?.message ?? "",
    /^pipe pod "[^"]+\/no-image-1-pipe-[0-9a-f]{10}" cannot run: init container "gen" is in ErrImageNeverPull; phase Pending; init container "gen" waiting: ErrImageNeverPull: /,
  );

  const started = Date.now();
  const slow = await waitForRequest(scn, "slow-1", failed, (PENDING_TIMEOUT_S + 60) * 1000);
  assert.equal(reasonOf(slow), "PodPendingTimeout");
  assert.match(
    succeeded(slow)?.message ?? "",
    new RegExp(
      `^pipe pod "[^"]+/slow-1-pipe-[0-9a-f]{10}" did not get its files ready within the pending-timeout of ${PENDING_TIMEOUT_S}s; phase Pending; init container "gen" running`,
    ),
  );
  const created = Date.parse(
    (await getRequest(scn.admin, scn.namespace, "slow-1")).metadata.creationTimestamp!,
  );
  assert.ok(Date.now() - created >= PENDING_TIMEOUT_S * 1000, "not before the deadline");
  assert.ok(Date.now() - started < (PENDING_TIMEOUT_S + 30) * 1000, "soon after it");
});

test("RBAC: Secrets create-only; pods (read too), exec and outputs only where the namespace opted in", async () => {
  const scn = scenario();
  const other = await scn.extraNamespace("pipe-no-opt-in");
  const user = `system:serviceaccount:${scn.namespace}:quarry-pipe-resolver`;
  const may = async (namespace: string, verb: string, resource: string, subresource = "") => {
    const review = await scn.admin.create<KubeObject & { status?: { allowed?: boolean } }>(
      {
        group: "authorization.k8s.io",
        version: "v1",
        plural: "subjectaccessreviews",
        kind: "SubjectAccessReview",
        namespaced: false,
      },
      {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        metadata: {},
        spec: {
          user,
          groups: [
            "system:serviceaccounts",
            `system:serviceaccounts:${scn.namespace}`,
            "system:authenticated",
          ],
          resourceAttributes: { namespace, verb, group: "", resource, subresource },
        },
      } as KubeObject,
    );
    return review.status?.allowed === true;
  };
  assert.equal(await may(scn.namespace, "create", "secrets"), true);
  for (const verb of ["get", "list", "watch", "update", "patch", "delete"])
    assert.equal(await may(scn.namespace, verb, "secrets"), false, `secrets ${verb}`);
  for (const [verb, resource, sub] of [
    ["create", "pods", ""],
    ["create", "pods", "exec"],
    ["get", "pods", "exec"],
    ["create", "configmaps", ""],
    // pods are read where the namespace opted in, never cluster-wide
    ["get", "pods", ""],
    ["list", "pods", ""],
    ["watch", "pods", ""],
  ] as const) {
    assert.equal(
      await may(scn.namespace, verb, resource, sub),
      true,
      `${resource}/${sub} ${verb} where opted in`,
    );
    assert.equal(await may(other, verb, resource, sub), false, `${resource}/${sub} ${verb} elsewhere`);
  }
  for (const verb of ["get", "list", "watch"])
    assert.equal(await may("", verb, "pods"), false, `pods ${verb} cluster-wide`);
});
