// The resolver's steps on FakeKubeClient, with a fake PodFileReader: given
// the objects a step finds (the Pipe, its strategy, the pod and its status,
// the receipt, outputs already there), exactly the writes it makes and what
// it answers. The kubelet is the test: it writes pod statuses by seeding.
// The real exec, tar and RBAC are in e2e/scenarios/pipe-resolve.test.ts.
import assert from "node:assert/strict";
import { createHash, createHmac } from "node:crypto";
import { test } from "node:test";
import {
  clusterPipeStrategies,
  type Pipe,
  type PipeStrategy,
  pipeStrategies,
  pipes,
  type ResolutionRequest,
} from "@quarry/api";
import { configMaps, type KubeObject, secrets } from "@quarry/kube";
import { FakeKubeClient } from "@quarry/kube/testing";
import type { Logger, Span } from "@quarry/observability";
import {
  isPending,
  type Params,
  ResolutionError,
  type ResolveContext,
  type Resolved,
} from "@quarry/resolver-sdk";
import type { FileRead, PodFileReader, PodRef } from "./copy.ts";
import { podName } from "./names.ts";
import { NAMESPACE_ROLE, PipeResolver, pods } from "./resolver.ts";
import { cachedLookup } from "./sources.ts";

const T0 = Date.parse("2025-03-01T10:00:00Z");
const NS = "team-a";
const KEY = "-----BEGIN PRIVATE KEY-----\nTOP-SECRET-KEY-MATERIAL\n-----END PRIVATE KEY-----\n";
const CRT = "-----BEGIN CERTIFICATE-----\npublic\n-----END CERTIFICATE-----\n";
const ENV = "# build settings\nMODE=release\nTOKEN=TOP-SECRET-TOKEN\n";
const SECRETS = ["TOP-SECRET-KEY-MATERIAL", "TOP-SECRET-TOKEN"];
const sha = (s: string | Buffer) => createHash("sha256").update(s).digest("hex");
/** The installation's digest key, as the fake Secret would hold it. */
const DIGEST_KEY = Buffer.alloc(32, 7);
const hmac = (s: string | Buffer) => createHmac("sha256", DIGEST_KEY).update(s).digest("hex");
/** What every step's config allows unless a test says otherwise: the strategy's ServiceAccount. */
const CONFIG = { "allowed-service-accounts": "pipes" };
const b64 = (s: string) => Buffer.from(s).toString("base64");

const RUN = { apiVersion: "tekton.dev/v1beta1", kind: "CustomRun", name: "run-1", uid: "uid-run-1" };
const REQUEST: ResolutionRequest = {
  apiVersion: "resolution.tekton.dev/v1beta1",
  kind: "ResolutionRequest",
  metadata: {
    name: "r1",
    namespace: NS,
    uid: "uid-r1",
    ownerReferences: [{ ...RUN, controller: true, blockOwnerDeletion: true }],
  },
  spec: { params: [{ name: "pipe", value: "gencert" }] },
};
const POD = podName({ namespace: NS, name: "r1", uid: "uid-r1" });
const RECEIPT = POD;
const OUT = { key: "run-1-gencert-tls-key", crt: "run-1-gencert-tls-crt", env: "run-1-gencert-env" };

function strategy(): PipeStrategy {
  return {
    apiVersion: "quarry.dev/v1alpha1",
    kind: "PipeStrategy",
    metadata: {
      name: "openssl",
      namespace: NS,
      annotations: { "example.com/team": "a", "quarry.dev/reason": "reserved" },
    },
    spec: {
      params: [{ name: "cn" }, { name: "days", default: "365" }],
      outputs: [
        { path: "/out/tls.crt", kind: "ConfigMap" },
        { path: "/out/build.env", kind: "ConfigMap" },
        { path: "/out/ca.crt", kind: "ConfigMap" },
        { path: "/out/tls.key", kind: "Secret" },
      ],
      pod: {
        serviceAccountName: "pipes",
        volumes: [{ name: "out", emptyDir: {} }],
        initContainers: [
          {
            name: "gen",
            image: "alpine/openssl",
            args: ["-days", "$(params.days)", "-subj", "/CN=$(params.cn)"],
            volumeMounts: [{ name: "out", mountPath: "/out" }],
          },
        ],
      },
    },
  };
}

function pipe(): Pipe {
  return {
    apiVersion: "quarry.dev/v1alpha1",
    kind: "Pipe",
    metadata: { name: "gencert", namespace: NS },
    spec: {
      strategy: { kind: "PipeStrategy", name: "openssl" },
      params: [{ name: "cn", value: "api.team-a.svc" }],
      pipe: [
        { file: "/out/tls.key", kind: "Secret", key: "tls-key" },
        { file: "/out/tls.crt", kind: "ConfigMap", key: "tls-crt" },
        { envFile: "/out/build.env", kind: "ConfigMap", key: "env" },
      ],
    },
  };
}

/** Files the fake pod holds: bytes, or a FileRead failure. */
class FakeFiles implements PodFileReader {
  readonly reads: string[] = [];
  files: Record<string, string | FileRead>;
  constructor(files: Record<string, string | FileRead>) {
    this.files = files;
  }
  async read(target: PodRef, path: string): Promise<FileRead> {
    assert.deepEqual(target, { namespace: NS, pod: POD, container: "quarry-wait" });
    this.reads.push(path);
    const f = this.files[path];
    if (f === undefined) return { ok: false, problem: "missing" };
    return typeof f === "string" ? { ok: true, bytes: Buffer.from(f) } : f;
  }
}

const READY = {
  phase: "Running",
  initContainerStatuses: [{ name: "gen", state: { terminated: { exitCode: 0, reason: "Completed" } } }],
  containerStatuses: [{ name: "quarry-wait", state: { running: {} } }],
};

function setup(
  files: Record<string, string | FileRead> = {
    "/out/tls.key": KEY,
    "/out/tls.crt": CRT,
    "/out/build.env": ENV,
  },
) {
  let now = T0;
  const client = new FakeKubeClient({ now: () => now });
  client.seed(pipeStrategies, strategy());
  client.seed(pipes, pipe());
  const logs: string[] = [];
  const fake = new FakeFiles(files);
  const keyReads: string[] = [];
  const resolver = new PipeResolver({
    lookup: cachedLookup(client, {}),
    files: fake,
    digestKey: async () => {
      keyReads.push("key");
      return DIGEST_KEY;
    },
    now: () => now,
    self: { namespace: "quarry-system", serviceAccount: "quarry-pipe-resolver" },
  });
  return {
    client,
    files: fake,
    resolver,
    logs,
    keyReads,
    advance: (ms: number) => {
      now += ms;
    },
    /** The kubelet reports a status for the pipe pod. */
    kubelet: (status: unknown) => {
      const pod = client.object<KubeObject>(pods, NS, POD);
      assert.ok(pod, "the pipe pod exists");
      client.seed(pods, { ...pod, status });
    },
  };
}
type Harness = ReturnType<typeof setup>;

function logger(lines: string[]): Logger {
  const log =
    (level: string) =>
    (...args: unknown[]) => {
      lines.push(`${level} ${JSON.stringify(args)}`);
    };
  const l = { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") } as Record<
    string,
    unknown
  >;
  l.child = () => l;
  return l as unknown as Logger;
}

interface StepResult {
  outcome?: Resolved | { pending: string; wakeAfterMs: number | undefined };
  error?: { reason: string; message: string };
  writes: string[];
}

/** One resolve step, as the SDK runs it: children from the (fake) cache, writes recorded. */
async function step(
  h: Harness,
  opts: {
    request?: ResolutionRequest;
    params?: Params;
    cacheLag?: boolean;
    namespace?: string;
    config?: Record<string, string>;
  } = {},
): Promise<StepResult> {
  const request = opts.request ?? REQUEST;
  const uid = request.metadata.uid ?? "";
  const cached = opts.cacheLag
    ? []
    : (await h.client.list(pods, request.metadata.namespace)).items.filter((p) =>
        (p.metadata.ownerReferences ?? []).some((o) => o.uid === uid),
      );
  h.client.clearActions();
  const ctx: ResolveContext = {
    signal: AbortSignal.timeout(10_000),
    namespace: request.metadata.namespace ?? "",
    name: request.metadata.name ?? "",
    url: undefined,
    request,
    attempt: 1,
    config: opts.config ?? CONFIG,
    log: logger(h.logs),
    span: { setAttribute: () => undefined } as unknown as Span,
    client: h.client,
    ownerReference: {
      apiVersion: "resolution.tekton.dev/v1beta1",
      kind: "ResolutionRequest",
      name: request.metadata.name ?? "",
      uid,
      controller: true,
    },
    children: <T extends KubeObject>(rt: { plural: string }) => {
      assert.equal(rt.plural, "pods");
      return cached as T[];
    },
  };
  const writes = () =>
    h.client.writes().map((w) => `${w.verb} ${w.resource} ${w.name}${w.error ? ` -> ${w.error}` : ""}`);
  try {
    const out = await h.resolver.resolve(opts.params ?? { pipe: "gencert" }, ctx);
    if (isPending(out))
      return { outcome: { pending: out.message ?? "", wakeAfterMs: out.wakeAfterMs }, writes: writes() };
    return { outcome: out, writes: writes() };
  } catch (err) {
    if (!(err instanceof ResolutionError)) throw err;
    return { error: { reason: err.reason, message: err.message }, writes: writes() };
  }
}

const STATUS_DATA = [
  "- key: tls-key",
  "  kind: Secret",
  `  name: ${OUT.key}`,
  `  hmacSha256: ${hmac(KEY)}`,
  "- key: tls-crt",
  "  kind: ConfigMap",
  `  name: ${OUT.crt}`,
  `  sha256: ${sha(CRT)}`,
  "- key: env",
  "  kind: ConfigMap",
  `  name: ${OUT.env}`,
  `  sha256: ${sha(ENV)}`,
  "",
].join("\n");

const STORE_WRITES = [
  `create secrets ${OUT.key}`,
  `create configmaps ${RECEIPT}`,
  `create configmaps ${OUT.crt}`,
  `patch configmaps ${RECEIPT}`,
  `create configmaps ${OUT.env}`,
  `patch configmaps ${RECEIPT}`,
  `patch configmaps ${RECEIPT}`,
  `delete pods ${POD}`,
];

function resolvedText(r: StepResult): string {
  assert.ok(r.outcome && !("pending" in r.outcome), `resolved, got ${JSON.stringify(r)}`);
  return Buffer.from(r.outcome.data).toString();
}

test("a pipe, step by step: pod created, pending until ready, files stored, pod deleted, replay answers alike", async () => {
  const h = setup();

  const s1 = await step(h);
  assert.deepEqual(s1.writes, [`create pods ${POD}`]);
  assert.deepEqual(s1.outcome, {
    pending: `waiting for pipe pod "${NS}/${POD}": phase Pending; init container "gen" not started; container "quarry-wait" not started`,
    wakeAfterMs: 121_000, // from the end of the creationTimestamp's second
  });
  const pod = h.client.object<KubeObject & { spec: Record<string, unknown> }>(pods, NS, POD)!;
  assert.deepEqual(pod.metadata.labels, {
    "quarry.dev/pipe": "gencert",
    "quarry.dev/request": "r1",
    "app.kubernetes.io/managed-by": "quarry",
  });
  assert.deepEqual(
    pod.metadata.annotations,
    { "example.com/team": "a" },
    "reserved prefixes are not propagated",
  );
  assert.deepEqual(pod.metadata.ownerReferences, [
    {
      apiVersion: "resolution.tekton.dev/v1beta1",
      kind: "ResolutionRequest",
      name: "r1",
      uid: "uid-r1",
      controller: true,
    },
  ]);
  assert.equal(pod.spec.serviceAccountName, "pipes", "the strategy's ServiceAccount");
  assert.deepEqual((pod.spec.initContainers as { args: string[] }[])[0]!.args, [
    "-days",
    "365",
    "-subj",
    "/CN=api.team-a.svc",
  ]);

  h.advance(30_000);
  const s2 = await step(h);
  assert.deepEqual(s2.writes, [], "the pod is there: no second pod");
  assert.equal(s2.outcome && "pending" in s2.outcome && s2.outcome.wakeAfterMs, 91_000);

  h.kubelet({ phase: "Pending", initContainerStatuses: [{ name: "gen", state: { running: {} } }] });
  const s3 = await step(h);
  assert.deepEqual(s3.writes, []);
  assert.match((s3.outcome as { pending: string }).pending, /init container "gen" running/);
  assert.deepEqual(h.files.reads, [], "nothing is copied before the init container is done");

  h.kubelet(READY);
  const s4 = await step(h);
  assert.deepEqual(s4.writes, STORE_WRITES);
  assert.equal(resolvedText(s4), STATUS_DATA);
  assert.deepEqual((s4.outcome as Resolved).annotations, {
    "resolution.tekton.dev/content-type": "application/x-yaml",
  });
  assert.deepEqual(h.files.reads, ["/out/tls.key", "/out/tls.crt", "/out/build.env"]);
  assert.equal(h.client.object(pods, NS, POD), undefined, "the pod is deleted");

  const labels = {
    "quarry.dev/pipe": "gencert",
    "quarry.dev/request": "r1",
    "app.kubernetes.io/managed-by": "quarry",
  };
  const owner = [RUN];
  const secret = h.client.object<KubeObject & Record<string, unknown>>(secrets, NS, OUT.key)!;
  assert.deepEqual(
    {
      labels: secret.metadata.labels,
      annotations: secret.metadata.annotations,
      owners: secret.metadata.ownerReferences,
    },
    { labels, annotations: { "quarry.dev/pipe-key": "tls-key" }, owners: owner },
  );
  assert.deepEqual([secret.type, secret.data], ["Opaque", { "tls.key": b64(KEY) }]);
  const crt = h.client.object<KubeObject & Record<string, unknown>>(configMaps, NS, OUT.crt)!;
  assert.deepEqual(crt.binaryData, { "tls.crt": b64(CRT) });
  assert.deepEqual(crt.metadata.ownerReferences, owner, "outputs belong to the run, not the request");
  const env = h.client.object<KubeObject & Record<string, unknown>>(configMaps, NS, OUT.env)!;
  assert.deepEqual(env.binaryData, { MODE: b64("release"), TOKEN: b64("TOP-SECRET-TOKEN") });
  const receipt = h.client.object<KubeObject & { data: Record<string, string> }>(configMaps, NS, RECEIPT)!;
  assert.equal(receipt.data.state, "stored");
  assert.deepEqual(receipt.metadata.ownerReferences, [
    {
      apiVersion: "resolution.tekton.dev/v1beta1",
      kind: "ResolutionRequest",
      name: "r1",
      uid: "uid-r1",
      controller: true,
    },
  ]);

  // the answer was lost (the status write failed): the replay answers from the receipt
  const s5 = await step(h);
  assert.deepEqual(s5.writes, [`delete pods ${POD} -> 404`]);
  assert.equal(resolvedText(s5), STATUS_DATA);
  assert.equal(h.files.reads.length, 3, "no copy on replay");

  // secret content only ever in the Secret's and the envFile ConfigMap's data
  assert.ok(
    h.logs.some((l) => l.includes("pipe outputs stored")),
    "the logs were captured",
  );
  const everything = JSON.stringify([
    s1,
    s2,
    s3,
    s4.writes,
    s5,
    resolvedText(s4),
    h.logs,
    receipt,
    h.client.object(pods, NS, POD),
  ]);
  for (const s of SECRETS) {
    assert.doesNotMatch(everything, new RegExp(s));
    assert.doesNotMatch(everything, new RegExp(b64(s).slice(0, 12)));
  }
});

test("a step finds each failure: reason, message naming the pod or file, and the pod deleted", async () => {
  const big: FileRead = { ok: false, problem: "tooLarge", size: 1024 * 1024 + 1 };
  const cases: {
    name: string;
    status?: unknown;
    files?: Record<string, string | FileRead>;
    elapsedMs?: number;
    reason: string;
    message: RegExp;
    writes?: string[];
    reads?: string[];
  }[] = [
    {
      name: "ImagePullBackOff",
      status: {
        phase: "Pending",
        initContainerStatuses: [
          {
            name: "gen",
            state: {
              waiting: { reason: "ImagePullBackOff", message: 'Back-off pulling image "alpine/openssl"' },
            },
          },
        ],
      },
      reason: "PodFailed",
      message: new RegExp(
        `^pipe pod "${NS}/${POD}" cannot run: init container "gen" is in ImagePullBackOff; phase Pending; init container "gen" waiting: ImagePullBackOff: Back-off pulling image "alpine/openssl"`,
      ),
      reads: [],
    },
    {
      name: "crash loop",
      status: {
        phase: "Pending",
        initContainerStatuses: [
          {
            name: "gen",
            restartCount: 2,
            state: { waiting: { reason: "CrashLoopBackOff" } },
            lastState: { terminated: { exitCode: 3, reason: "Error", message: "TOP-SECRET-KEY-MATERIAL" } },
          },
        ],
      },
      reason: "PodFailed",
      message: /CrashLoopBackOff, 2 restarts; last terminated with exit code 3 \(Error\)/,
    },
    {
      name: "Pending past the pending-timeout",
      status: {
        phase: "Pending",
        conditions: [
          { type: "PodScheduled", status: "False", reason: "Unschedulable", message: "0/1 nodes" },
        ],
      },
      elapsedMs: 121_000,
      reason: "PodPendingTimeout",
      message: new RegExp(
        `^pipe pod "${NS}/${POD}" did not get its files ready within the pending-timeout of 2m0s; phase Pending; not scheduled: Unschedulable 0/1 nodes`,
      ),
    },
    {
      name: "a file over 1 MiB is refused before it is copied",
      status: READY,
      files: { "/out/tls.key": KEY, "/out/tls.crt": big, "/out/build.env": ENV },
      reason: "TooLarge",
      message:
        /^file "\/out\/tls.crt" \(key "tls-crt"\) has 1048577 bytes; at most 1048576 \(1 MiB\) may be piped, so it was not copied$/,
      reads: ["/out/tls.key", "/out/tls.crt"],
    },
    {
      name: "a missing file",
      status: READY,
      files: { "/out/tls.key": KEY, "/out/tls.crt": CRT },
      reason: "NotFound",
      message: new RegExp(
        `^envFile "/out/build.env" \\(key "env"\\) does not exist in pipe pod "${NS}/${POD}": the init container did not write it$`,
      ),
    },
    {
      name: "a malformed envFile: the line number, never its text",
      status: READY,
      files: { "/out/tls.key": KEY, "/out/tls.crt": CRT, "/out/build.env": "A=1\n\nTOP-SECRET-TOKEN\n" },
      reason: "InvalidEnvFile",
      message: /^envFile "\/out\/build.env" \(key "env"\): line 3 is not KEY=VALUE \(it has no "="\)$/,
    },
    {
      name: "a directory where a file should be",
      status: READY,
      files: { "/out/tls.key": { ok: false, problem: "notFile", type: "directory" } },
      reason: "InvalidPipe",
      message: new RegExp(
        `^file "/out/tls.key" \\(key "tls-key"\\) is a directory in pipe pod "${NS}/${POD}", not a regular file$`,
      ),
    },
    {
      name: "tar failed",
      status: READY,
      files: {
        "/out/tls.key": {
          ok: false,
          problem: "failed",
          detail: "tar exited with code 2: tar: /out/tls.key: Cannot open: Permission denied",
        },
      },
      reason: "CopyFailed",
      message:
        /could not be read in pipe pod .*: tar exited with code 2: tar: \/out\/tls.key: Cannot open: Permission denied$/,
    },
  ];
  for (const c of cases) {
    const h = setup(c.files);
    await step(h); // creates the pod
    if (c.elapsedMs) h.advance(c.elapsedMs);
    if (c.status) h.kubelet(c.status);
    const got = await step(h);
    assert.equal(got.error?.reason, c.reason, `${c.name}: ${JSON.stringify(got)}`);
    assert.match(got.error?.message ?? "", c.message, c.name);
    assert.deepEqual(got.writes, c.writes ?? [`delete pods ${POD}`], c.name);
    if (c.reads) assert.deepEqual(h.files.reads, c.reads, c.name);
    for (const s of SECRETS) assert.doesNotMatch(JSON.stringify([got, h.logs]), new RegExp(s), c.name);
    assert.equal(h.client.object(secrets, NS, OUT.key), undefined, `${c.name}: nothing stored`);
  }
});

test("failures before the pod: bad requests, missing objects, the resolver's own ServiceAccount, RBAC", async () => {
  const cases: {
    name: string;
    given?: (h: Harness) => void;
    params?: Params;
    request?: ResolutionRequest;
    reason: string;
    message: RegExp;
    writes?: string[];
  }[] = [
    {
      name: "no Pipe",
      params: { pipe: "nope" },
      reason: "PipeNotFound",
      message: /^Pipe "nope" does not exist in namespace "team-a"$/,
    },
    {
      name: "no strategy",
      given: (h) =>
        h.client.seed(pipes, {
          ...pipe(),
          spec: { ...pipe().spec, strategy: { kind: "ClusterPipeStrategy", name: "gone" } },
        }),
      reason: "StrategyNotFound",
      message: /^ClusterPipeStrategy "gone" does not exist$/,
    },
    { name: "neither pipe nor strategy", params: {}, reason: "InvalidParams", message: /needs param "pipe"/ },
    {
      name: "an undeclared param",
      params: { pipe: "gencert", color: "red" },
      reason: "UnknownParam",
      message: /color/,
    },
    {
      name: "a pod as the resolver itself",
      request: { ...REQUEST, metadata: { ...REQUEST.metadata, namespace: "quarry-system" } },
      given: (h) => {
        h.client.seed(pipes, { ...pipe(), metadata: { name: "gencert", namespace: "quarry-system" } });
        const s = strategy();
        s.metadata.namespace = "quarry-system";
        s.spec.pod.serviceAccountName = "quarry-pipe-resolver";
        h.client.seed(pipeStrategies, s);
      },
      reason: "InvalidStrategy",
      message: /may not run as the pipe resolver's own ServiceAccount "quarry-pipe-resolver"/,
    },
    {
      name: "a namespace that did not opt in (the receipt GET is refused)",
      given: (h) => h.client.failNext("get", 403, { resource: "configmaps" }),
      reason: "Forbidden",
      message: new RegExp(
        `may not get configmaps in namespace "team-a" \\(RBAC\\).*ClusterRole ${NAMESPACE_ROLE}`,
      ),
    },
    {
      name: "pod create refused",
      given: (h) => h.client.failNext("create", 403, { resource: "pods" }),
      reason: "Forbidden",
      message: /may not create pods in namespace "team-a"/,
      writes: [`create pods ${POD} -> 403`],
    },
    {
      name: "the apiserver refuses the pod",
      given: (h) =>
        h.client.failNext("create", 422, {
          resource: "pods",
          message: "spec.initContainers[0].image: Required value",
        }),
      reason: "InvalidStrategy",
      message: /^PipeStrategy "openssl": the apiserver refused the pipe pod: .*Required value/,
      writes: [`create pods ${POD} -> 422`],
    },
    {
      name: "the pod's name is taken by a pod that is not this request's",
      given: (h) => h.client.seed(pods, { metadata: { name: POD, namespace: NS }, spec: {} }),
      reason: "OutputConflict",
      message: new RegExp(`^pod "${POD}" exists in namespace "team-a" and is not this request's pipe pod$`),
      writes: [`create pods ${POD} -> 409`],
    },
    {
      name: "the receipt's name is taken",
      given: (h) =>
        h.client.seed(configMaps, { metadata: { name: RECEIPT, namespace: NS }, data: { a: "b" } }),
      reason: "OutputConflict",
      message: new RegExp(`^ConfigMap "${RECEIPT}" exists but is not this request's pipe receipt$`),
    },
  ];
  for (const c of cases) {
    const h = setup();
    c.given?.(h);
    const got = await step(h, { params: c.params, request: c.request });
    assert.equal(got.error?.reason, c.reason, `${c.name}: ${JSON.stringify(got)}`);
    assert.match(got.error?.message ?? "", c.message, c.name);
    assert.deepEqual(got.writes, c.writes ?? [], c.name);
  }
});

test("replays: whatever a crashed step left, no output is made twice or overwritten", async () => {
  const receiptWith = (
    state: string,
    results: { key: string; kind: string; name: string; sha256?: string; hmacSha256?: string }[],
  ) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: RECEIPT,
      namespace: NS,
      labels: { "quarry.dev/pipe-receipt": "true", "app.kubernetes.io/managed-by": "quarry" },
      ownerReferences: [
        {
          apiVersion: "resolution.tekton.dev/v1beta1",
          kind: "ResolutionRequest",
          name: "r1",
          uid: "uid-r1",
          controller: true,
        },
      ],
    },
    data: { state, "results.json": JSON.stringify(results) },
  });
  const secretDone = { key: "tls-key", kind: "Secret", name: OUT.key, hmacSha256: hmac(KEY) };
  const crtDone = { key: "tls-crt", kind: "ConfigMap", name: OUT.crt, sha256: sha(CRT) };
  const outputs = (h: Harness) => ({
    secret: (data: string) =>
      h.client.seed(secrets, {
        metadata: { name: OUT.key, namespace: NS },
        type: "Opaque",
        data: { "tls.key": b64(data) },
      }),
    crt: (owner = RUN, data = CRT) =>
      h.client.seed(configMaps, {
        metadata: {
          name: OUT.crt,
          namespace: NS,
          labels: {
            "quarry.dev/pipe": "gencert",
            "quarry.dev/request": "r1",
            "app.kubernetes.io/managed-by": "quarry",
          },
          annotations: { "quarry.dev/pipe-key": "tls-crt" },
          ownerReferences: [owner],
        },
        binaryData: { "tls.crt": b64(data) },
      }),
  });
  const cases: { name: string; given: (h: Harness) => void; writes: string[]; error?: RegExp }[] = [
    {
      name: "Secret created and recorded, then a crash: the Secret is not created again",
      given: (h) => {
        outputs(h).secret(KEY);
        h.client.seed(configMaps, receiptWith("storing", [secretDone]));
      },
      writes: [
        `create configmaps ${OUT.crt}`,
        `patch configmaps ${RECEIPT}`,
        `create configmaps ${OUT.env}`,
        `patch configmaps ${RECEIPT}`,
        `patch configmaps ${RECEIPT}`,
        `delete pods ${POD}`,
      ],
    },
    {
      name: "a ConfigMap created but not recorded: verified (ours, same data), recorded, not rewritten",
      given: (h) => {
        outputs(h).secret(KEY);
        outputs(h).crt();
        h.client.seed(configMaps, receiptWith("storing", [secretDone]));
      },
      writes: [
        `create configmaps ${OUT.crt} -> 409`,
        `patch configmaps ${RECEIPT}`,
        `create configmaps ${OUT.env}`,
        `patch configmaps ${RECEIPT}`,
        `patch configmaps ${RECEIPT}`,
        `delete pods ${POD}`,
      ],
    },
    {
      name: "everything recorded, not yet marked stored",
      given: (h) => {
        outputs(h).secret(KEY);
        outputs(h).crt();
        h.client.seed(
          configMaps,
          receiptWith("storing", [
            secretDone,
            crtDone,
            { key: "env", kind: "ConfigMap", name: OUT.env, sha256: sha(ENV) },
          ]),
        );
      },
      writes: [`patch configmaps ${RECEIPT}`, `delete pods ${POD}`],
    },
    {
      name: "a Secret created but not recorded: never taken as ours (it cannot be read)",
      given: (h) => outputs(h).secret(KEY),
      writes: [`create secrets ${OUT.key} -> 409`, `delete pods ${POD}`],
      error: new RegExp(
        `^Secret "${OUT.key}" already exists in namespace "team-a" and the pipe resolver may not read Secrets`,
      ),
    },
    {
      name: "the pod was made again after the Secret was stored: its new key is not stored over the old",
      given: (h) => {
        outputs(h).secret("an older key");
        h.client.seed(
          configMaps,
          receiptWith("storing", [{ ...secretDone, hmacSha256: hmac("an older key") }]),
        );
      },
      writes: [`delete pods ${POD}`],
      error: new RegExp(`^Secret "${OUT.key}" was stored for this request from a file with another digest`),
    },
    {
      name: "someone else's ConfigMap under the output's name",
      given: (h) => outputs(h).crt({ ...RUN, uid: "another-run" }),
      writes: [
        `create secrets ${OUT.key}`,
        `create configmaps ${RECEIPT}`,
        `create configmaps ${OUT.crt} -> 409`,
        `delete pods ${POD}`,
      ],
      error: new RegExp(
        `^ConfigMap "${OUT.crt}" already exists in namespace "team-a" and is not this pipe's output for the same key and owner; nothing was overwritten$`,
      ),
    },
    {
      name: "this pipe's ConfigMap for the same run with other data",
      given: (h) => outputs(h).crt(RUN, "other"),
      writes: [
        `create secrets ${OUT.key}`,
        `create configmaps ${RECEIPT}`,
        `create configmaps ${OUT.crt} -> 409`,
        `delete pods ${POD}`,
      ],
      error: /and holds other data; nothing was overwritten$/,
    },
  ];
  for (const c of cases) {
    const h = setup();
    await step(h);
    h.kubelet(READY);
    c.given(h);
    const got = await step(h);
    assert.deepEqual(got.writes, c.writes, c.name);
    if (c.error) {
      assert.equal(got.error?.reason, "OutputConflict", `${c.name}: ${JSON.stringify(got)}`);
      assert.match(got.error?.message ?? "", c.error, c.name);
    } else {
      assert.equal(resolvedText(got), STATUS_DATA, c.name);
      assert.equal(
        h.client.object<KubeObject & { data: Record<string, string> }>(configMaps, NS, RECEIPT)?.data.state,
        "stored",
      );
    }
    if (c.name.startsWith("the pod was made again"))
      assert.deepEqual(
        h.client.object<KubeObject & { data: Record<string, string> }>(secrets, NS, OUT.key)?.data,
        {
          "tls.key": b64("an older key"),
        },
      );
  }
});

test("the cache lags the pod just made: 409 means it is there, no second pod", async () => {
  const h = setup();
  await step(h);
  const again = await step(h, { cacheLag: true });
  assert.deepEqual(again.writes, [`create pods ${POD} -> 409`]);
  assert.ok(again.outcome && "pending" in again.outcome);
  assert.equal((await h.client.list(pods, NS)).items.length, 1);
});

test("a request with its own strategy and files (no Pipe): the strategy's name stands for the pipe", async () => {
  const h = setup({ "/out/ca.crt": CRT });
  const s = strategy();
  s.spec.allowInlineFiles = true;
  h.client.seed(pipeStrategies, s);
  const request: ResolutionRequest = { ...REQUEST, metadata: { ...REQUEST.metadata, ownerReferences: [] } };
  const params = {
    strategy: "openssl",
    strategyKind: "PipeStrategy",
    files: "[{file: /out/ca.crt, kind: ConfigMap, key: ca}]",
    cn: "x",
  };
  await step(h, { request, params });
  h.kubelet(READY);
  const got = await step(h, { request, params });
  assert.equal(
    resolvedText(got),
    `- key: ca\n  kind: ConfigMap\n  name: r1-openssl-ca\n  sha256: ${sha(CRT)}\n`,
    "named <request>-<strategy>-<key>: the request owns it",
  );
  assert.deepEqual(h.client.object<KubeObject>(configMaps, NS, "r1-openssl-ca")?.metadata.ownerReferences, [
    { apiVersion: "resolution.tekton.dev/v1beta1", kind: "ResolutionRequest", name: "r1", uid: "uid-r1" },
  ]);
});

test("the resolver's declarations: per request, no kind check, pods watched by label, config checked", () => {
  const r = setup().resolver;
  assert.equal(r.type, "pipe");
  assert.equal(r.perRequest, true);
  assert.equal(r.checksKind, false);
  assert.deepEqual(r.watches, [
    {
      resource: pods,
      labelSelector: "app.kubernetes.io/managed-by=quarry,quarry.dev/pipe",
      perNamespace: true,
    },
  ]);
  assert.throws(() => r.validateConfig({ "pending-timeout": "later" }), /pending-timeout/);
  r.validateConfig({ "pending-timeout": "5m" });
});

test("policy refusals come before the pod: Forbidden naming the field, nothing written", async () => {
  type Strategy = PipeStrategy & { spec: { allowedNamespaces?: string[] } };
  const withStrategy = (h: Harness, change: (s: Strategy) => void, kind = "PipeStrategy") => {
    const s = strategy() as Strategy;
    change(s);
    if (kind === "ClusterPipeStrategy") {
      h.client.seed(clusterPipeStrategies, { ...s, kind, metadata: { name: "openssl" } });
      h.client.seed(pipes, { ...pipe(), spec: { ...pipe().spec, strategy: { kind, name: "openssl" } } });
    } else h.client.seed(pipeStrategies, s);
  };
  const inline = (files: string, kind = "PipeStrategy") => ({
    strategy: "openssl",
    strategyKind: kind,
    files,
    cn: "x",
  });
  const cases: {
    name: string;
    given?: (h: Harness) => void;
    params?: Params;
    config?: Record<string, string>;
    message: RegExp;
  }[] = [
    {
      name: "a Pipe stores the strategy's Secret as a ConfigMap",
      given: (h) => {
        const p = pipe();
        p.spec.pipe[0]!.kind = "ConfigMap";
        h.client.seed(pipes, p);
      },
      message:
        /^Pipe "gencert": spec.pipe\[0\].kind is ConfigMap, but PipeStrategy "openssl" declares "\/out\/tls.key" a Secret \(spec.outputs\[3\]\): it may be stored only as a Secret$/,
    },
    {
      name: "a request's own files store the key as a ConfigMap",
      given: (h) => withStrategy(h, (s) => (s.spec.allowInlineFiles = true)),
      params: inline("[{file: /out/tls.key, kind: ConfigMap, key: k}]"),
      message:
        /^request: param "files"\[0\].kind is ConfigMap, but PipeStrategy "openssl" declares "\/out\/tls.key" a Secret/,
    },
    {
      name: "a file the strategy does not declare, as a ConfigMap",
      given: (h) => withStrategy(h, (s) => (s.spec.outputs = [])),
      message:
        /spec.pipe\[1\].kind is ConfigMap, but PipeStrategy "openssl" does not declare "\/out\/tls.crt" a ConfigMap output/,
    },
    {
      name: "a request's own files where the strategy does not allow them",
      params: inline("[{file: /out/tls.key, kind: Secret, key: k}]"),
      message: /^param "files": PipeStrategy "openssl" does not allow a request to name its own files/,
    },
    {
      name: "a fixed param overridden",
      given: (h) => {
        const p = pipe();
        p.spec.params = [{ name: "cn", value: "api.team-a.svc", fixed: true }];
        h.client.seed(pipes, p);
      },
      params: { pipe: "gencert", cn: "evil.example" },
      message:
        /^param "cn" is fixed by Pipe "gencert" \(spec.params\[0\].fixed\); a request may not give it another value$/,
    },
    {
      name: "a ClusterPipeStrategy that does not name the namespace",
      given: (h) => withStrategy(h, (s) => (s.spec.allowedNamespaces = ["team-b"]), "ClusterPipeStrategy"),
      message:
        /^ClusterPipeStrategy "openssl" may not be used from namespace "team-a": its spec.allowedNamespaces does not match it$/,
    },
    {
      name: "a ClusterPipeStrategy that names none",
      given: (h) => withStrategy(h, () => undefined, "ClusterPipeStrategy"),
      message:
        /^ClusterPipeStrategy "openssl" may not be used from namespace "team-a": its spec.allowedNamespaces is empty/,
    },
    {
      name: "privileged",
      given: (h) =>
        withStrategy(h, (s) => (s.spec.pod.initContainers![0]!.securityContext = { privileged: true })),
      message:
        /^PipeStrategy "openssl": the pipe resolver's pod policy refuses spec.pod.initContainers\[0\].securityContext.privileged \(a privileged container; pod-policy-allow: privileged would allow it\)/,
    },
    {
      name: "hostPath",
      given: (h) =>
        withStrategy(h, (s) => s.spec.pod.volumes!.push({ name: "node", hostPath: { path: "/" } })),
      message: /refuses spec.pod.volumes\[1\].hostPath \(a directory of the node; pod-policy-allow: hostPath/,
    },
    {
      name: "hostNetwork in the strategy (the operator's host-network is not the strategy's)",
      given: (h) => withStrategy(h, (s) => (s.spec.pod.hostNetwork = true)),
      config: { ...CONFIG, "host-network": "true" },
      message: /refuses spec.pod.hostNetwork \(a host namespace; pod-policy-allow: hostNetwork/,
    },
    {
      name: "a ServiceAccount the operator did not allow",
      config: {},
      message:
        /refuses spec.pod.serviceAccountName \(ServiceAccount "pipes"; allowed-service-accounts would allow it\)/,
    },
  ];
  for (const c of cases) {
    const h = setup();
    c.given?.(h);
    const got = await step(h, { params: c.params, config: c.config });
    assert.equal(got.error?.reason, "Forbidden", `${c.name}: ${JSON.stringify(got)}`);
    assert.match(got.error?.message ?? "", c.message, c.name);
    assert.deepEqual(got.writes, [], `${c.name}: no pod, no output`);
  }

  // what the strategy, the Pipe and the operator allow goes through to the pod
  const allowed: {
    name: string;
    given: (h: Harness) => void;
    params?: Params;
    config?: Record<string, string>;
  }[] = [
    {
      name: "a ClusterPipeStrategy that names the namespace by glob",
      given: (h) => withStrategy(h, (s) => (s.spec.allowedNamespaces = ["team-*"]), "ClusterPipeStrategy"),
    },
    {
      name: "a fixed param given its own value",
      given: (h) => {
        const p = pipe();
        p.spec.params = [{ name: "cn", value: "api.team-a.svc", fixed: true }];
        h.client.seed(pipes, p);
      },
      params: { pipe: "gencert", cn: "api.team-a.svc" },
    },
    {
      name: "privileged and hostPath where the operator allows them",
      given: (h) =>
        withStrategy(h, (s) => {
          s.spec.pod.initContainers![0]!.securityContext = { privileged: true };
          s.spec.pod.volumes!.push({ name: "node", hostPath: { path: "/" } });
        }),
      config: { ...CONFIG, "pod-policy-allow": "privileged,hostPath" },
    },
    { name: "every ServiceAccount", given: () => undefined, config: { "allowed-service-accounts": "*" } },
  ];
  for (const c of allowed) {
    const h = setup();
    c.given(h);
    const got = await step(h, { params: c.params, config: c.config });
    assert.deepEqual(got.writes, [`create pods ${POD}`], `${c.name}: ${JSON.stringify(got)}`);
  }
});

test("the digest key is read only when a pipe stores a Secret", async () => {
  const h = setup();
  await step(h);
  h.kubelet(READY);
  await step(h);
  assert.deepEqual(h.keyReads, ["key"]);

  const onlyConfigMaps = setup();
  const p = pipe();
  p.spec.pipe = p.spec.pipe.filter((e) => e.kind === "ConfigMap");
  onlyConfigMaps.client.seed(pipes, p);
  await step(onlyConfigMaps);
  onlyConfigMaps.kubelet(READY);
  const got = await step(onlyConfigMaps);
  assert.match(resolvedText(got), /sha256: /);
  assert.deepEqual(onlyConfigMaps.keyReads, []);
});
