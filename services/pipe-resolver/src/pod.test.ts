import assert from "node:assert/strict";
import { test } from "node:test";
import type { Param, PipeStrategy, Pod } from "@quarry/api";
import { podName } from "./names.ts";
import { type BuildPodInput, buildPod, isPropagated, propagatedAnnotations } from "./pod.ts";
import { mergeParams } from "./request.ts";
import { kep17Strategy } from "./testdata.ts";
import { type CheckedStrategy, validateStrategy } from "./validate.ts";

const request = { namespace: "ns", name: "pipe-0123456789abcdef0123456789abcdef", uid: "uid-1" };

function checked(s: PipeStrategy = kep17Strategy()): CheckedStrategy {
  const r = validateStrategy(s, "PipeStrategy");
  assert.ok(r.ok, JSON.stringify(r));
  return r.strategy;
}

function build(input: Partial<BuildPodInput> = {}): Pod {
  const r = buildPod({
    request,
    strategy: checked(),
    pipeName: "gencert",
    params: [{ name: "cn", value: "example.com" }],
    ...input,
  });
  assert.ok(r.ok, JSON.stringify(r));
  return r.pod;
}

test("buildPod: KEP-17's pod, params substituted, the waiting container added, Quarry's labels, the request as owner", () => {
  assert.deepEqual(build(), {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: podName(request),
      namespace: "ns",
      labels: {
        "quarry.dev/pipe": "gencert",
        "quarry.dev/request": "pipe-0123456789abcdef0123456789abcdef",
        "app.kubernetes.io/managed-by": "quarry",
      },
      annotations: { "kubernetes.io/egress-bandwidth": "10M" },
      ownerReferences: [
        {
          apiVersion: "resolution.tekton.dev/v1beta1",
          kind: "ResolutionRequest",
          name: "pipe-0123456789abcdef0123456789abcdef",
          uid: "uid-1",
          controller: true,
        },
      ],
    },
    spec: {
      volumes: [
        { name: "shared-data", emptyDir: {} },
        { name: "ca", secret: { secretName: "ca" } },
      ],
      initContainers: [
        {
          name: "init",
          image: "alpine/openssl",
          command: ["openssl", "req", "-nodes"],
          args: ["-days", "365", "-subj", "/CN=example.com", "-keyout", "/tmp/MyKey.key"],
          env: [
            { name: "CN", value: "example.com" },
            // only values are substituted
            { name: "FROM_SECRET", valueFrom: { secretKeyRef: { name: "s", key: "$(params.cn)" } } },
          ],
          volumeMounts: [
            { name: "shared-data", mountPath: "/tmp" },
            { name: "ca", mountPath: "/ca", readOnly: true },
          ],
          securityContext: { runAsUser: 1000 },
        },
      ],
      containers: [
        {
          name: "quarry-wait",
          image: "busybox",
          command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"],
          volumeMounts: [{ name: "shared-data", mountPath: "/tmp", readOnly: true }],
          securityContext: { runAsUser: 1000 },
        },
      ],
      restartPolicy: "OnFailure",
      securityContext: { runAsNonRoot: true },
      serviceAccountName: "pipe",
    },
  });
});

test("buildPod: never changes the strategy it reads", () => {
  const s = checked();
  const before = structuredClone(s);
  build({ strategy: s, podDefaults: { tolerations: [{ operator: "Exists" }] } });
  assert.deepEqual(s, before);
});

test("buildPod: the same request always gets the same pod", () => {
  assert.deepEqual(build(), build());
  assert.notEqual(build().metadata.name, build({ request: { ...request, uid: "uid-2" } }).metadata.name);
});

test("buildPod: params — defaults, the Pipe's values, the request's over them", () => {
  const args = (params: Param[]) => build({ params }).spec.initContainers![0]!.args;
  const cases: [string, Param[], string[]][] = [
    [
      "defaults",
      [{ name: "cn", value: "a" }],
      ["-days", "365", "-subj", "/CN=a", "-keyout", "/tmp/MyKey.key"],
    ],
    [
      "the Pipe's values",
      mergeParams(
        [
          { name: "cn", value: "a" },
          { name: "days", value: "30" },
        ],
        [],
      ),
      ["-days", "30", "-subj", "/CN=a", "-keyout", "/tmp/MyKey.key"],
    ],
    [
      "the request's over the Pipe's",
      mergeParams(
        [
          { name: "cn", value: "a" },
          { name: "days", value: "30" },
        ],
        [{ name: "days", value: "7" }],
      ),
      ["-days", "7", "-subj", "/CN=a", "-keyout", "/tmp/MyKey.key"],
    ],
  ];
  for (const [name, params, want] of cases) assert.deepEqual(args(params), want, name);
  assert.deepEqual(
    build({
      params: [
        { name: "cn", value: "a" },
        { name: "flags", value: ["-x", "-y"] },
      ],
    }).spec.initContainers![0]!.command,
    ["openssl", "req", "-x", "-y"],
  );
});

test("buildPod: bad params fail with resolveParams' and substitute's reasons, naming the strategy", () => {
  const withEnv = (value: string) => {
    const s = kep17Strategy();
    s.spec.pod.initContainers![0]!.env = [{ name: "X", value }];
    return checked(s);
  };
  const cases: [string, Partial<BuildPodInput>, string, string][] = [
    [
      "undeclared",
      {
        params: [
          { name: "cn", value: "a" },
          { name: "colour", value: "blue" },
        ],
      },
      "UnknownParam",
      'PipeStrategy "gencert": param "colour" is not declared (declared: "days", "cn", "flags")',
    ],
    [
      "missing",
      { params: [] },
      "MissingParam",
      'PipeStrategy "gencert": param "cn" has no default and was not given',
    ],
    [
      "wrong type",
      { params: [{ name: "cn", value: ["a"] }] },
      "InvalidParamType",
      'PipeStrategy "gencert": param "cn" is declared string, but was given an array',
    ],
    [
      "a whole array as an env value",
      { strategy: withEnv("$(params.flags[*])"), params: [{ name: "cn", value: "a" }] },
      "InvalidParamReference",
      'PipeStrategy "gencert": spec.pod.initContainers[0] (command, args or env): reference "$(params.flags[*])": param "flags" is an array; a whole array can only stand alone as an array element',
    ],
    [
      "a reference to an undeclared param",
      { strategy: withEnv("$(params.nope)"), params: [{ name: "cn", value: "a" }] },
      "InvalidParamReference",
      'PipeStrategy "gencert": spec.pod.initContainers[0] (command, args or env): reference "$(params.nope)" names param "nope", which is not declared',
    ],
  ];
  for (const [name, input, reason, message] of cases) {
    const r = buildPod({ request, strategy: checked(), pipeName: "gencert", params: [], ...input });
    assert.deepEqual(r, { ok: false, reason, message }, name);
  }
});

test("annotations: all of the strategy's but kubectl's last-applied and Quarry's reserved prefixes (SHIP-0010)", () => {
  const cases: [string, boolean][] = [
    ["kubernetes.io/egress-bandwidth", true],
    ["container.apparmor.security.beta.kubernetes.io/init", true],
    ["example.com/anything", true],
    ["plain", true],
    ["kubectl.kubernetes.io/last-applied-configuration", false],
    ["kubectl.kubernetes.io/default-container", true],
    ["quarry.dev/reason", false],
    ["pipe.quarry.dev/x", false],
    ["pipestrategy.quarry.dev/x", false],
    ["clusterpipestrategy.quarry.dev/x", false],
    ["resolution.tekton.dev/type", false],
    ["tekton.dev/pipelineTask", true],
  ];
  for (const [key, want] of cases) assert.equal(isPropagated(key), want, key);
  assert.deepEqual(propagatedAnnotations(Object.fromEntries(cases.map(([k]) => [k, "v"]))), {
    "kubernetes.io/egress-bandwidth": "v",
    "container.apparmor.security.beta.kubernetes.io/init": "v",
    "example.com/anything": "v",
    plain: "v",
    "kubectl.kubernetes.io/default-container": "v",
    "tekton.dev/pipelineTask": "v",
  });
  // no annotations at all: no empty map on the pod
  const bare = kep17Strategy();
  bare.metadata.annotations = { "quarry.dev/x": "y" };
  assert.equal("annotations" in build({ strategy: checked(bare) }).metadata, false);
  // labels are never propagated
  assert.equal(build().metadata.labels?.team, undefined);
});

test("podDefaults: the waiting container's image and command, placement and networking where the strategy is silent", () => {
  const tolerate = { key: "node.example/e2e", operator: "Exists", effect: "NoSchedule" };
  const pod = build({
    podDefaults: {
      waitImage: "registry.local/wait:1",
      waitCommand: ["/pause"],
      waitImagePullPolicy: "Never",
      waitResources: { requests: { cpu: "1m" } },
      hostNetwork: true,
      nodeName: "node-1",
      tolerations: [tolerate],
    },
  });
  assert.deepEqual(pod.spec.containers?.[0], {
    name: "quarry-wait",
    image: "registry.local/wait:1",
    command: ["/pause"],
    volumeMounts: [{ name: "shared-data", mountPath: "/tmp", readOnly: true }],
    imagePullPolicy: "Never",
    resources: { requests: { cpu: "1m" } },
    securityContext: { runAsUser: 1000 },
  });
  assert.equal(pod.spec.hostNetwork, true);
  assert.equal(pod.spec.nodeName, "node-1");
  assert.deepEqual(pod.spec.tolerations, [tolerate]);

  // the strategy wins where it says something
  const s = kep17Strategy();
  Object.assign(s.spec.pod, {
    hostNetwork: false,
    nodeName: "gpu-1",
    tolerations: [{ key: "gpu", operator: "Exists" }],
  });
  const own = build({
    strategy: checked(s),
    podDefaults: { hostNetwork: true, nodeName: "node-1", tolerations: [tolerate] },
  });
  assert.equal(own.spec.hostNetwork, false);
  assert.equal(own.spec.nodeName, "gpu-1");
  assert.deepEqual(own.spec.tolerations, [{ key: "gpu", operator: "Exists" }, tolerate]);
  // no defaults: nothing added
  assert.equal("hostNetwork" in build().spec, false);
  assert.equal("tolerations" in build().spec, false);
});

test("the waiting container mounts the emptyDir as the init container does (subPath kept), and restartPolicy is OnFailure", () => {
  const s = kep17Strategy();
  delete s.spec.pod.restartPolicy;
  const init = s.spec.pod.initContainers![0]!;
  init.volumeMounts = [{ name: "shared-data", mountPath: "/work", subPath: "out" }];
  delete init.securityContext;
  const pod = build({ strategy: checked(s) });
  assert.equal(pod.spec.restartPolicy, "OnFailure");
  assert.deepEqual(pod.spec.containers?.[0]?.volumeMounts, [
    { name: "shared-data", mountPath: "/work", subPath: "out", readOnly: true },
  ]);
  assert.equal("securityContext" in pod.spec.containers![0]!, false);
});

test("labels: a long pipe name still makes a valid label value", () => {
  const pod = build({ pipeName: `gencert.${"x".repeat(240)}` });
  const v = pod.metadata.labels?.["quarry.dev/pipe"] ?? "";
  assert.ok(v.length <= 63);
  assert.match(v, /^gencert\.x+-[0-9a-f]{10}$/);
});
