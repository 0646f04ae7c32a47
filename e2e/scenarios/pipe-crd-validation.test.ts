// Quarry's pipe CRDs (pipes, pipestrategies, clusterpipestrategies in
// quarry.dev/v1alpha1) on a real kube-apiserver: KEP-17-shaped strategies
// and Pipes are admitted and round-trip, each bad shape is rejected at
// admission with a message naming the field and the rule, and kubectl's
// columns and the quarry category are there.
//
// Not checked at admission, because a CRD rule sees only its own object: that
// a Pipe's files lie under its strategy's emptyDir mount. Such a Pipe is
// admitted here; the pipe resolver fails it (InvalidPipe).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { request } from "node:https";
import { after, test } from "node:test";
import {
  type AnyPipeStrategy,
  type ClusterPipeStrategy,
  clusterPipeStrategies,
  type Pipe,
  type PipeEntry,
  type PipeStrategy,
  type PodSpec,
  pipeStrategies,
  pipes,
} from "@quarry/api";
import { useScenario } from "@quarry/harness/scenario";
import { isApiError, type KubeObject } from "@quarry/kube";
// The resolver's pure pod builder, to check what it makes is a valid Pod (pipe-resolve runs such pods).
import { buildPod } from "@quarry/pipe-resolver/pod";
import { validatePipe, validateStrategy } from "@quarry/pipe-resolver/validate";

const scenario = useScenario("pipe-crd");

/** Cluster-scoped strategies outlive the namespace: delete them by name. */
const clusterObjects: string[] = [];
after(async () => {
  const { admin } = scenario();
  for (const name of clusterObjects)
    await admin.delete(clusterPipeStrategies, undefined, name).catch(() => {});
});

/** KEP-17's example pod: openssl in the one init container, writing into the emptyDir at /tmp. */
function kep17Pod(): PodSpec {
  return {
    volumes: [
      { name: "shared-data", emptyDir: {} },
      { name: "ca", secret: { secretName: "ca" } },
    ],
    initContainers: [
      {
        name: "init",
        image: "busybox",
        command: ["/bin/sh", "-c"],
        args: ["openssl req -new -x509 -days $(params.days) -nodes -out /tmp/tls.crt -keyout /tmp/tls.key"],
        env: [{ name: "CN", value: "$(params.cn)" }],
        volumeMounts: [
          { name: "shared-data", mountPath: "/tmp" },
          { name: "ca", mountPath: "/ca", readOnly: true },
        ],
        resources: { limits: { cpu: "100m", memory: "64Mi" } },
      },
    ],
    restartPolicy: "OnFailure",
    securityContext: { runAsNonRoot: true, runAsUser: 1000 },
  };
}

function strategy(namespace: string, name: string, pod: Record<string, unknown> = {}): PipeStrategy {
  return {
    apiVersion: "quarry.dev/v1alpha1",
    kind: "PipeStrategy",
    metadata: { name, namespace, annotations: { "kubernetes.io/egress-bandwidth": "10M" } },
    spec: {
      params: [
        { name: "days", type: "string", default: "365" },
        { name: "cn", default: "example.com", description: "Common name." },
      ],
      pod: { ...kep17Pod(), ...pod },
    },
  };
}

function clusterStrategy(name: string, pod: Record<string, unknown> = {}): ClusterPipeStrategy {
  const { spec } = strategy("", name, pod);
  clusterObjects.push(name);
  return { apiVersion: "quarry.dev/v1alpha1", kind: "ClusterPipeStrategy", metadata: { name }, spec };
}

function pipe(namespace: string, name: string, spec: Partial<Pipe["spec"]> = {}): Pipe {
  return {
    apiVersion: "quarry.dev/v1alpha1",
    kind: "Pipe",
    metadata: { name, namespace },
    spec: {
      strategy: { kind: "PipeStrategy", name: "gencert" },
      params: [{ name: "days", value: "30" }],
      pipe: [
        { file: "/tmp/tls.key", kind: "Secret", key: "tls-key" },
        { file: "/tmp/tls.crt", kind: "ConfigMap", key: "Tls_Cert" },
        { envFile: "/tmp/out/build.env", kind: "ConfigMap", key: "env" },
      ],
      ...spec,
    },
  };
}

const entries = (...e: Record<string, unknown>[]) => ({ pipe: e as unknown as PipeEntry[] });

type AnyPipeObject = Pipe | AnyPipeStrategy;

function create<T extends AnyPipeObject>(obj: T): Promise<T> {
  const rt =
    obj.kind === "Pipe" ? pipes : obj.kind === "PipeStrategy" ? pipeStrategies : clusterPipeStrategies;
  return scenario().admin.create(rt, obj as T & KubeObject);
}

/** The apiserver's message for a 422 Invalid, or a description of what happened instead. */
async function rejection(obj: AnyPipeObject): Promise<string> {
  try {
    await create(obj);
    return "admitted";
  } catch (err) {
    return isApiError(err, 422) ? err.message : `not a 422: ${String(err)}`;
  }
}

async function expectRejections(cases: [AnyPipeObject, RegExp][]): Promise<void> {
  const failures: string[] = [];
  for (const [obj, expected] of cases) {
    const message = await rejection(obj);
    if (!expected.test(message))
      failures.push(`${obj.kind} ${obj.metadata.name}: ${message} (want ${expected})`);
  }
  assert.deepEqual(failures, []);
}

test("KEP-17-shaped strategies and Pipes are admitted and round-trip unchanged", async () => {
  const ns = scenario().namespace;
  const noRestartPolicy = strategy(ns, "no-restart-policy");
  delete noRestartPolicy.spec.pod.restartPolicy;
  for (const obj of [
    strategy(ns, "gencert"),
    noRestartPolicy,
    strategy(ns, "empty-restart-policy", { restartPolicy: "" }),
    strategy(ns, "empty-containers", { containers: [] }),
    clusterStrategy(`gencert-${ns}`),
    pipe(ns, "gencert"),
    pipe(ns, "cluster", {
      strategy: { kind: "ClusterPipeStrategy", name: `gencert-${ns}` },
      params: undefined,
      ...entries({ file: "/tmp/.a-b_c.d", kind: "Secret", key: "-_-" }),
    }),
    pipe(ns, "at-the-bound", {
      pipe: Array.from({ length: 64 }, (_, i) => ({
        file: `/tmp/f${i}`,
        kind: "ConfigMap" as const,
        key: `k${i}`,
      })),
    }),
  ]) {
    const created = await create(obj);
    assert.deepEqual(
      created.spec,
      JSON.parse(JSON.stringify(obj.spec)),
      `${obj.kind} ${obj.metadata.name} round-trips`,
    );
  }
});

test("policy fields: a strategy's outputs and allowInlineFiles, a ClusterPipeStrategy's allowedNamespaces, a Pipe's fixed params", async () => {
  const ns = scenario().namespace;
  const outputs = [
    { path: "/tmp/tls.crt", kind: "ConfigMap" as const },
    { path: "/tmp/tls.key", kind: "Secret" as const },
  ];
  const withPolicy = <T extends AnyPipeStrategy>(s: T, more: Record<string, unknown>): T => ({
    ...s,
    spec: { ...s.spec, outputs, allowInlineFiles: true, ...more },
  });
  for (const obj of [
    withPolicy(strategy(ns, "with-outputs"), {}),
    withPolicy(clusterStrategy(`allowed-${ns}`), { allowedNamespaces: [ns, "team-*", "*"] }),
    pipe(ns, "fixed", { params: [{ name: "days", value: "30", fixed: true }] }),
  ]) {
    const created = await create(obj);
    assert.deepEqual(created.spec, JSON.parse(JSON.stringify(obj.spec)), `${obj.metadata.name} round-trips`);
  }
  // a PipeStrategy is its namespace's: it has no allowedNamespaces (pruned, never a grant)
  const pruned = await create(withPolicy(strategy(ns, "no-namespaces"), { allowedNamespaces: ["*"] }));
  assert.equal((pruned.spec as unknown as Record<string, unknown>).allowedNamespaces, undefined);
  await expectRejections([
    [
      withPolicy(strategy(ns, "output-twice"), {
        outputs: [...outputs, { path: "/tmp/tls.key", kind: "ConfigMap" }],
      }),
      /spec\.outputs\[2\]: Duplicate value: .*"\/tmp\/tls\.key"/,
    ],
    [
      withPolicy(strategy(ns, "output-escapes"), {
        outputs: [{ path: "/tmp/../etc/passwd", kind: "ConfigMap" }],
      }),
      /spec\.outputs\[0\]\.path: .*must be a clean path/,
    ],
    [
      withPolicy(strategy(ns, "output-kind"), { outputs: [{ path: "/tmp/a", kind: "Pod" }] }),
      /spec\.outputs\[0\]\.kind: Unsupported value: "Pod"/,
    ],
    [
      withPolicy(clusterStrategy(`bad-namespace-${ns}`), { allowedNamespaces: ["Team_A"] }),
      /spec\.allowedNamespaces\[0\]: Invalid value: "Team_A"/,
    ],
    [
      pipe(ns, "fixed-string", {
        params: [{ name: "days", value: "30", fixed: "yes" as unknown as boolean }],
      }),
      /spec\.params\[0\]\.fixed: Invalid value: "string"/,
    ],
  ]);
});

test("bad strategies are rejected at admission with a message naming the field and KEP-17's rule", async () => {
  const ns = scenario().namespace;
  const init = kep17Pod().initContainers![0]!;
  const emptyDir = { name: "shared-data", emptyDir: {} };
  await expectRejections([
    [
      strategy(ns, "two-inits", { initContainers: [init, { ...init, name: "second" }] }),
      /spec\.pod\.initContainers: Invalid value: .*a pipe pod needs exactly one init container: the one that writes the piped files/,
    ],
    [
      strategy(ns, "no-init", { initContainers: undefined }),
      /spec\.pod\.initContainers: .*exactly one init container/,
    ],
    [
      strategy(ns, "empty-init", { initContainers: [] }),
      /spec\.pod\.initContainers: .*exactly one init container/,
    ],
    [
      strategy(ns, "a-container", { containers: [{ name: "main", image: "busybox" }] }),
      /spec\.pod\.containers: Invalid value: .*a pipe pod has no containers of its own/,
    ],
    [
      strategy(ns, "no-volumes", { volumes: undefined }),
      /spec\.pod\.volumes: Invalid value: .*exactly one emptyDir volume/,
    ],
    [
      strategy(ns, "no-emptydir", { volumes: [{ name: "shared-data", secret: { secretName: "s" } }] }),
      /spec\.pod\.volumes: .*exactly one emptyDir volume/,
    ],
    [
      strategy(ns, "two-emptydirs", {
        volumes: [emptyDir, { name: "more", emptyDir: { medium: "Memory" } }],
      }),
      /spec\.pod\.volumes: .*exactly one emptyDir volume.*/,
    ],
    [
      strategy(ns, "emptydir-not-mounted", {
        initContainers: [{ ...init, volumeMounts: [{ name: "ca", mountPath: "/ca" }] }],
      }),
      /spec\.pod\.initContainers: .*the init container must mount the emptyDir volume, once/,
    ],
    [
      strategy(ns, "no-mounts", { initContainers: [{ ...init, volumeMounts: undefined }] }),
      /the init container must mount the emptyDir volume, once/,
    ],
    [
      strategy(ns, "mounted-twice", {
        initContainers: [
          {
            ...init,
            volumeMounts: [
              { name: "shared-data", mountPath: "/tmp" },
              { name: "shared-data", mountPath: "/out" },
            ],
          },
        ],
      }),
      /the init container must mount the emptyDir volume, once/,
    ],
    [
      strategy(ns, "restart-always", { restartPolicy: "Always" }),
      /spec\.pod\.restartPolicy: Unsupported value: "Always": supported values: "", "OnFailure"/,
    ],
    [
      strategy(ns, "restart-never", { restartPolicy: "Never" }),
      /spec\.pod\.restartPolicy: Unsupported value: "Never"/,
    ],
    [
      {
        ...strategy(ns, "reserved-param"),
        spec: { params: [{ name: "files", default: "x" }], pod: kep17Pod() },
      },
      /spec\.params: .*params may not be named pipe, strategy, strategyKind, files/,
    ],
    [
      {
        ...strategy(ns, "duplicate-params"),
        spec: { params: [{ name: "days" }, { name: "days", default: "1" }], pod: kep17Pod() },
      },
      /spec\.params: .*param names must be unique/,
    ],
    [
      { ...strategy(ns, "bad-param-name"), spec: { params: [{ name: "1x" }], pod: kep17Pod() } },
      /spec\.params\[0\]\.name: Invalid value: "1x"/,
    ],
    [{ ...strategy(ns, "no-pod"), spec: {} } as unknown as PipeStrategy, /spec\.pod: Required value/],
    [clusterStrategy(`two-inits-${ns}`, { initContainers: [init, init] }), /exactly one init container/],
    [
      clusterStrategy(`restart-always-${ns}`, { restartPolicy: "Always" }),
      /spec\.pod\.restartPolicy: Unsupported value/,
    ],
  ]);
});

test("bad Pipes are rejected at admission with a message naming the entry and the rule", async () => {
  const ns = scenario().namespace;
  await expectRejections([
    [
      pipe(ns, "space-in-name", entries({ file: "/tmp/my key", kind: "Secret", key: "k" })),
      /spec\.pipe\[0\]\.file: Invalid value: .*the file's name \(after the last '\/'\) becomes a data key/,
    ],
    [
      pipe(ns, "colon-in-name", entries({ file: "/tmp/a:b", kind: "Secret", key: "k" })),
      /spec\.pipe\[0\]\.file: .*becomes a data key/,
    ],
    [
      pipe(ns, "dotdot-name", entries({ file: "/tmp/..", kind: "Secret", key: "k" })),
      /spec\.pipe\[0\]\.file: .*becomes a data key/,
    ],
    [
      pipe(ns, "dot-name", entries({ file: "/tmp/.", kind: "Secret", key: "k" })),
      /spec\.pipe\[0\]\.file: .*becomes a data key/,
    ],
    [
      pipe(ns, "long-name", entries({ envFile: `/tmp/${"a".repeat(254)}`, kind: "ConfigMap", key: "k" })),
      /spec\.pipe\[0\]\.envFile: .*becomes a data key/,
    ],
    [
      pipe(ns, "relative", entries({ file: "tmp/a", kind: "Secret", key: "k" })),
      /spec\.pipe\[0\]\.file: .*must be an absolute path/,
    ],
    [
      pipe(ns, "escapes", entries({ envFile: "/tmp/../etc/passwd", kind: "ConfigMap", key: "k" })),
      /spec\.pipe\[0\]\.envFile: .*must be a clean path/,
    ],
    [
      pipe(ns, "trailing-slash", entries({ file: "/tmp/dir/", kind: "Secret", key: "k" })),
      /spec\.pipe\[0\]\.file: .*must be a clean path/,
    ],
    [
      pipe(ns, "dot-key", entries({ file: "/tmp/a", kind: "Secret", key: "a.b" })),
      /spec\.pipe\[0\]\.key: Invalid value: "a\.b": spec\.pipe\[0\]\.key in body should match '\^\[a-zA-Z0-9_-\]\+\$'/,
    ],
    [
      pipe(ns, "space-key", entries({ file: "/tmp/a", kind: "Secret", key: "a b" })),
      /spec\.pipe\[0\]\.key: .*should match/,
    ],
    [
      pipe(ns, "unicode-key", entries({ file: "/tmp/a", kind: "Secret", key: "ключ" })),
      /spec\.pipe\[0\]\.key: .*should match/,
    ],
    [pipe(ns, "empty-key", entries({ file: "/tmp/a", kind: "Secret", key: "" })), /spec\.pipe\[0\]\.key/],
    [
      pipe(ns, "both", entries({ file: "/tmp/a", envFile: "/tmp/b", kind: "Secret", key: "k" })),
      /spec\.pipe\[0\]: Invalid value: .*set exactly one of file or envFile/,
    ],
    [
      pipe(ns, "neither", entries({ kind: "Secret", key: "k" })),
      /spec\.pipe\[0\]: .*set exactly one of file or envFile/,
    ],
    [
      pipe(ns, "bad-kind", entries({ file: "/tmp/a", kind: "Pod", key: "k" })),
      /spec\.pipe\[0\]\.kind: Unsupported value: "Pod": supported values: "Secret", "ConfigMap"/,
    ],
    [
      pipe(
        ns,
        "duplicate-keys",
        entries(
          { file: "/tmp/a", kind: "Secret", key: "k" },
          { envFile: "/tmp/b", kind: "ConfigMap", key: "k" },
        ),
      ),
      /spec\.pipe: Invalid value: .*pipe keys must be unique/,
    ],
    [
      pipe(ns, "no-entries", { pipe: [] }),
      /spec\.pipe: Invalid value: 0: spec\.pipe in body should have at least 1 items/,
    ],
    [
      pipe(ns, "too-many", {
        pipe: Array.from({ length: 65 }, (_, i) => ({
          file: `/tmp/f${i}`,
          kind: "Secret" as const,
          key: `k${i}`,
        })),
      }),
      /spec\.pipe: Too many: 65: must have at most 64 items/,
    ],
    [
      pipe(ns, "bad-strategy-kind", { strategy: { kind: "BuildStrategy" as "PipeStrategy", name: "x" } }),
      /spec\.strategy\.kind: Unsupported value: "BuildStrategy"/,
    ],
    [
      pipe(ns, "duplicate-params", {
        params: [
          { name: "days", value: "1" },
          { name: "days", value: "2" },
        ],
      }),
      /spec\.params: .*param names must be unique/,
    ],
  ]);
});

test("a file outside the strategy's emptyDir cannot be seen at admission: the Pipe is admitted (the resolver fails it)", async () => {
  const ns = scenario().namespace;
  const created = await create(
    pipe(ns, "outside-mount", entries({ file: "/etc/passwd", kind: "Secret", key: "k" })),
  );
  assert.equal(created.spec.pipe[0]?.file, "/etc/passwd");
});

interface Table {
  columnDefinitions: { name: string }[];
  rows: { cells: unknown[] }[];
}

/** GET as kubectl does for `kubectl get`: the server-side table with the CRD's printer columns. */
function getTable(path: string): Promise<Table> {
  const { cp } = scenario();
  const config = JSON.parse(readFileSync(cp.adminKubeconfig, "utf8")) as {
    users: { user: { token: string } }[];
  };
  return new Promise((resolve, reject) => {
    const req = request(
      `${cp.server}${path}`,
      {
        ca: readFileSync(cp.caFile),
        headers: {
          Authorization: `Bearer ${config.users[0]?.user.token ?? ""}`,
          Accept: "application/json;as=Table;v=v1;g=meta.k8s.io",
        },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          body += c;
        });
        res.on("end", () =>
          res.statusCode === 200
            ? resolve(JSON.parse(body) as Table)
            : reject(new Error(`${res.statusCode} ${body}`)),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}

test("kubectl's columns: Strategy for Pipes, Init Image for strategies; all three in the quarry category", async () => {
  const { admin, namespace: ns } = scenario();
  await create(
    strategy(ns, "columns", {
      initContainers: [{ ...kep17Pod().initContainers![0]!, image: "alpine/openssl:3" }],
    }),
  );
  await create(pipe(ns, "columns", { strategy: { kind: "PipeStrategy", name: "columns" } }));
  const strategies = await getTable(`/apis/quarry.dev/v1alpha1/namespaces/${ns}/pipestrategies`);
  assert.deepEqual(
    strategies.columnDefinitions.map((c) => c.name),
    ["Name", "Init Image", "Age"],
  );
  const row = strategies.rows.find((r) => r.cells[0] === "columns");
  assert.equal(row?.cells[1], "alpine/openssl:3");
  const pipeTable = await getTable(`/apis/quarry.dev/v1alpha1/namespaces/${ns}/pipes`);
  assert.deepEqual(
    pipeTable.columnDefinitions.map((c) => c.name),
    ["Name", "Strategy", "Age"],
  );
  assert.equal(pipeTable.rows.find((r) => r.cells[0] === "columns")?.cells[1], "columns");
  const clusterTable = await getTable("/apis/quarry.dev/v1alpha1/clusterpipestrategies");
  assert.deepEqual(
    clusterTable.columnDefinitions.map((c) => c.name),
    ["Name", "Init Image", "Age"],
  );

  const discovery = await admin.request<{
    resources: { name: string; namespaced: boolean; categories?: string[] }[];
  }>("GET", "/apis/quarry.dev/v1alpha1");
  for (const [plural, namespaced] of [
    ["pipes", true],
    ["pipestrategies", true],
    ["clusterpipestrategies", false],
  ] as const) {
    const resource = discovery.resources.find((r) => r.name === plural);
    assert.deepEqual(resource?.categories, ["quarry"], plural);
    assert.equal(resource?.namespaced, namespaced, plural);
  }
});

test("the pod the pipe resolver builds from an admitted strategy and Pipe is a valid Pod (server-side dry run)", async () => {
  const { admin, namespace: ns } = scenario();
  const stored = await create(strategy(ns, "for-pod"));
  const storedPipe = await create(
    pipe(ns, "for-pod", { strategy: { kind: "PipeStrategy", name: "for-pod" } }),
  );
  const s = validateStrategy(stored, "PipeStrategy");
  const p = validatePipe(storedPipe);
  assert.ok(s.ok && p.ok, JSON.stringify([s, p]));
  const built = buildPod({
    request: {
      namespace: ns,
      name: "pipe-0123456789abcdef0123456789abcdef",
      uid: "8c1f2a6e-0000-4000-8000-000000000001",
    },
    strategy: s.strategy,
    pipeName: p.pipe.name,
    params: p.pipe.params,
    podDefaults: { tolerations: [{ key: "node.example/e2e", operator: "Exists", effect: "NoSchedule" }] },
  });
  assert.ok(built.ok, JSON.stringify(built));
  const pod = await admin.request<{ metadata: { name: string }; spec: { containers: { name: string }[] } }>(
    "POST",
    `/api/v1/namespaces/${ns}/pods`,
    { body: built.pod, query: { dryRun: "All" } },
  );
  assert.equal(pod.metadata.name, built.pod.metadata.name);
  assert.deepEqual(
    pod.spec.containers.map((c) => c.name),
    ["quarry-wait"],
  );
});
