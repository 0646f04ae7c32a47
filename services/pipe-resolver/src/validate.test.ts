import assert from "node:assert/strict";
import { test } from "node:test";
import type { PipeStrategy, PodSpec } from "@quarry/api";
import { buildPod } from "./pod.ts";
import { readRequest } from "./request.ts";
import { kep17Pipe, kep17Strategy } from "./testdata.ts";
import {
  type CheckedStrategy,
  checkFiles,
  notFound,
  validatePipe,
  validatePipeEntries,
  validateStrategy,
} from "./validate.ts";

function withPod(pod: Record<string, unknown>): PipeStrategy {
  const s = kep17Strategy();
  s.spec.pod = { ...s.spec.pod, ...pod } as PodSpec;
  return s;
}

function withInit(init: Record<string, unknown>): PipeStrategy {
  const s = kep17Strategy();
  s.spec.pod.initContainers = [{ ...s.spec.pod.initContainers![0]!, ...init }];
  return s;
}

function checked(): CheckedStrategy {
  const r = validateStrategy(kep17Strategy(), "PipeStrategy");
  assert.ok(r.ok);
  return r.strategy;
}

test("validateStrategy: a KEP-17 strategy passes with its mount, declarations and annotations", () => {
  const s = checked();
  assert.equal(s.kind, "PipeStrategy");
  assert.equal(s.name, "gencert");
  assert.deepEqual(s.mount, { volumeName: "shared-data", mountPath: "/tmp" });
  assert.deepEqual(
    s.params.map((p) => p.name),
    ["days", "cn", "flags"],
  );
  assert.equal(s.initContainer.name, "init");
  assert.equal(s.annotations["kubernetes.io/egress-bandwidth"], "10M");
  for (const pod of [{ restartPolicy: undefined }, { restartPolicy: "" }, { containers: [] }]) {
    assert.equal(validateStrategy(withPod(pod), "PipeStrategy").ok, true, JSON.stringify(pod));
  }
  const sub = validateStrategy(
    withInit({ volumeMounts: [{ name: "shared-data", mountPath: "/work/", subPath: "out" }] }),
    "ClusterPipeStrategy",
  );
  assert.ok(sub.ok);
  assert.deepEqual(sub.strategy.mount, { volumeName: "shared-data", mountPath: "/work/", subPath: "out" });
});

test("validateStrategy: each break of KEP-17's rules is InvalidStrategy, naming the field", () => {
  const init = kep17Strategy().spec.pod.initContainers![0]!;
  const emptyDir = { name: "shared-data", emptyDir: {} };
  const p = 'PipeStrategy "gencert": ';
  const cases: [string, unknown, string][] = [
    [
      "two init containers",
      withPod({ initContainers: [init, { ...init, name: "second" }] }),
      `${p}spec.pod.initContainers has 2 containers; a pipe pod needs exactly one init container, the one that writes the piped files`,
    ],
    [
      "no init container",
      withPod({ initContainers: undefined }),
      `${p}spec.pod.initContainers has 0 containers; a pipe pod needs exactly one init container, the one that writes the piped files`,
    ],
    [
      "a regular container",
      withPod({ containers: [{ name: "main", image: "busybox" }] }),
      `${p}spec.pod.containers has 1 container; a pipe pod has none of its own (Quarry adds the one that waits while the files are copied)`,
    ],
    [
      "restartPolicy Always",
      withPod({ restartPolicy: "Always" }),
      `${p}spec.pod.restartPolicy is "Always"; a pipe pod's must be OnFailure or unset (the init container may run again, the waiting container must not)`,
    ],
    [
      "restartPolicy Never",
      withPod({ restartPolicy: "Never" }),
      `${p}spec.pod.restartPolicy is "Never"; a pipe pod's must be OnFailure or unset (the init container may run again, the waiting container must not)`,
    ],
    [
      "no emptyDir",
      withPod({ volumes: [{ name: "ca", secret: { secretName: "ca" } }] }),
      `${p}spec.pod.volumes has 0 emptyDir volumes; a pipe pod needs exactly one, where the init container writes the piped files`,
    ],
    [
      "two emptyDirs",
      withPod({ volumes: [emptyDir, { name: "more", emptyDir: { medium: "Memory" } }] }),
      `${p}spec.pod.volumes has 2 emptyDir volumes; a pipe pod needs exactly one, where the init container writes the piped files`,
    ],
    [
      "emptyDir not mounted",
      withInit({ volumeMounts: [{ name: "ca", mountPath: "/ca" }] }),
      `${p}spec.pod.initContainers[0] mounts the emptyDir volume "shared-data" 0 times; it must mount it once`,
    ],
    [
      "emptyDir mounted twice",
      withInit({
        volumeMounts: [
          { name: "shared-data", mountPath: "/tmp" },
          { name: "shared-data", mountPath: "/out" },
        ],
      }),
      `${p}spec.pod.initContainers[0] mounts the emptyDir volume "shared-data" 2 times; it must mount it once`,
    ],
    [
      "read-only mount",
      withInit({ volumeMounts: [{ name: "shared-data", mountPath: "/tmp", readOnly: true }] }),
      `${p}spec.pod.initContainers[0] mounts the emptyDir volume "shared-data" read-only; it must write the piped files there`,
    ],
    [
      "relative mount",
      withInit({ volumeMounts: [{ name: "shared-data", mountPath: "tmp" }] }),
      `${p}spec.pod.initContainers[0]: the emptyDir volume "shared-data" must be mounted at an absolute path`,
    ],
    [
      "subPathExpr",
      withInit({ volumeMounts: [{ name: "shared-data", mountPath: "/tmp", subPathExpr: "$(POD)" }] }),
      `${p}spec.pod.initContainers[0] mounts the emptyDir volume "shared-data" with subPathExpr, which the waiting container cannot expand; use subPath`,
    ],
    [
      "init container takes the waiting container's name",
      withInit({ name: "quarry-wait" }),
      `${p}spec.pod.initContainers[0] may not be named "quarry-wait": that is the container Quarry adds`,
    ],
    [
      "args not strings",
      withInit({ args: ["a", 1] }),
      `${p}spec.pod.initContainers[0].args must be a list of strings`,
    ],
    [
      "command not a list",
      withInit({ command: "sh -c x" }),
      `${p}spec.pod.initContainers[0].command must be a list of strings`,
    ],
    [
      "env value not a string",
      withInit({ env: [{ name: "A", value: 1 }] }),
      `${p}spec.pod.initContainers[0].env[0] must have a name and, if any, a string value`,
    ],
    [
      "reserved param name",
      { ...kep17Strategy(), spec: { params: [{ name: "files" }], pod: kep17Strategy().spec.pod } },
      `${p}spec.params[0].name "files" is one of the pipe resolver's own request params (pipe, strategy, strategyKind, files)`,
    ],
    [
      "duplicate declarations",
      { ...kep17Strategy(), spec: { params: [{ name: "a" }, { name: "a" }], pod: kep17Strategy().spec.pod } },
      `${p}spec.params: param "a" is declared more than once`,
    ],
    [
      "bad param name",
      { ...kep17Strategy(), spec: { params: [{ name: "1a" }], pod: kep17Strategy().spec.pod } },
      `${p}spec.params[0].name "1a" must match ^[a-zA-Z_][a-zA-Z0-9_.-]*$`,
    ],
    [
      "no pod",
      { ...kep17Strategy(), spec: {} },
      `${p}spec.pod is missing: a pipe strategy is a pod template`,
    ],
    [
      "pod is a list",
      { ...kep17Strategy(), spec: { pod: [] } },
      `${p}spec.pod must be a pod spec (an object), not an array`,
    ],
    ["no spec", { metadata: { name: "gencert" } }, `${p}spec is missing`],
    ["not an object", "gencert", 'PipeStrategy "": not an object with metadata.name'],
    [
      "outputs not a list",
      { ...kep17Strategy(), spec: { ...kep17Strategy().spec, outputs: { path: "/tmp/a" } } },
      `${p}spec.outputs must be a list of {path, kind}`,
    ],
    [
      "an output without a path",
      { ...kep17Strategy(), spec: { ...kep17Strategy().spec, outputs: [{ kind: "Secret" }] } },
      `${p}spec.outputs[0] must have a path`,
    ],
    [
      "an output path with ..",
      {
        ...kep17Strategy(),
        spec: { ...kep17Strategy().spec, outputs: [{ path: "/tmp/../etc/passwd", kind: "ConfigMap" }] },
      },
      `${p}spec.outputs[0].path "/tmp/../etc/passwd" must be a clean path: no empty, '.' or '..' segments and no trailing '/'`,
    ],
    [
      "an output of another kind",
      { ...kep17Strategy(), spec: { ...kep17Strategy().spec, outputs: [{ path: "/tmp/a", kind: "Pod" }] } },
      `${p}spec.outputs[0].kind is "Pod"; use Secret or ConfigMap`,
    ],
    [
      "a path declared twice",
      {
        ...kep17Strategy(),
        spec: {
          ...kep17Strategy().spec,
          outputs: [
            { path: "/tmp/a", kind: "ConfigMap" },
            { path: "/tmp/a", kind: "Secret" },
          ],
        },
      },
      `${p}spec.outputs[1].path "/tmp/a" is also the path of spec.outputs[0]`,
    ],
    [
      "allowInlineFiles not a boolean",
      { ...kep17Strategy(), spec: { ...kep17Strategy().spec, allowInlineFiles: "yes" } },
      `${p}spec.allowInlineFiles must be true or false`,
    ],
  ];
  for (const [name, obj, message] of cases) {
    assert.deepEqual(
      validateStrategy(obj, "PipeStrategy"),
      { ok: false, reason: "InvalidStrategy", message },
      name,
    );
  }
});

test("validateStrategy: outputs by path, allowInlineFiles, and a ClusterPipeStrategy's allowedNamespaces", () => {
  const s = kep17Strategy();
  const plain = checked();
  assert.deepEqual([...plain.outputs], []);
  assert.equal(plain.allowInlineFiles, false);
  assert.equal(plain.allowedNamespaces, undefined, "a PipeStrategy has none");
  const spec = {
    ...s.spec,
    outputs: [
      { path: "/tmp/tls.crt", kind: "ConfigMap" },
      { path: "/tmp/MyKey.key", kind: "Secret" },
    ],
    allowInlineFiles: true,
    allowedNamespaces: ["team-a", "shop-*"],
  };
  const cluster = validateStrategy({ ...s, kind: "ClusterPipeStrategy", spec }, "ClusterPipeStrategy");
  assert.ok(cluster.ok);
  assert.deepEqual(
    [...cluster.strategy.outputs],
    [
      ["/tmp/tls.crt", { kind: "ConfigMap", index: 0 }],
      ["/tmp/MyKey.key", { kind: "Secret", index: 1 }],
    ],
  );
  assert.equal(cluster.strategy.allowInlineFiles, true);
  assert.deepEqual(cluster.strategy.allowedNamespaces, ["team-a", "shop-*"]);
  const none = validateStrategy({ ...s, spec: s.spec }, "ClusterPipeStrategy");
  assert.ok(none.ok);
  assert.deepEqual(none.strategy.allowedNamespaces, [], "unset: none");
  const c = 'ClusterPipeStrategy "gencert": ';
  const bad: [unknown, string][] = [
    ["team-a", `${c}spec.allowedNamespaces must be a list of namespace names or globs`],
    [
      ["Team-A"],
      `${c}spec.allowedNamespaces[0] "Team-A" must be a namespace name or a glob with * (^[a-z0-9*]([-a-z0-9*]*[a-z0-9*])?$)`,
    ],
    [["ok", "a/b"], `${c}spec.allowedNamespaces[1] "a/b" must be a namespace name or a glob with *`],
    [["x".repeat(64)], `${c}spec.allowedNamespaces[0] "${"x".repeat(64)}" must be a namespace name`],
  ];
  for (const [allowed, message] of bad) {
    const got = validateStrategy(
      { ...s, spec: { ...s.spec, allowedNamespaces: allowed } },
      "ClusterPipeStrategy",
    );
    assert.equal(got.ok, false, JSON.stringify(allowed));
    if (!got.ok) {
      assert.equal(got.reason, "InvalidStrategy");
      assert.ok(got.message.startsWith(message), got.message);
    }
  }
});

test("validatePipe: a KEP-17 Pipe passes; bad references, params and entries fail naming the field", () => {
  const good = validatePipe(kep17Pipe());
  assert.deepEqual(good, {
    ok: true,
    pipe: {
      name: "gencert",
      strategy: { kind: "PipeStrategy", name: "gencert" },
      params: [{ name: "cn", value: "example.com" }],
      fixed: new Map(),
      entries: [
        { file: "/tmp/MyKey.key", kind: "Secret", key: "Mycertificate" },
        { envFile: "/tmp/build.env", kind: "ConfigMap", key: "env" },
      ],
    },
  });
  const withSpec = (spec: Record<string, unknown>) => {
    const p = kep17Pipe();
    return { ...p, spec: { ...p.spec, ...spec } };
  };
  const p = 'Pipe "gencert": ';
  const cases: [string, unknown, string, string][] = [
    ["no strategy", withSpec({ strategy: undefined }), "InvalidPipe", `${p}spec.strategy is missing`],
    [
      "bad strategy kind",
      withSpec({ strategy: { kind: "BuildStrategy", name: "x" } }),
      "InvalidPipe",
      `${p}spec.strategy.kind is "BuildStrategy"; use PipeStrategy or ClusterPipeStrategy`,
    ],
    [
      "no strategy name",
      withSpec({ strategy: { kind: "PipeStrategy" } }),
      "InvalidPipe",
      `${p}spec.strategy.name is missing`,
    ],
    [
      "duplicate params",
      withSpec({
        params: [
          { name: "a", value: "1" },
          { name: "a", value: "2" },
        ],
      }),
      "DuplicateParam",
      `${p}spec.params: param "a" is given more than once`,
    ],
    [
      "param value of a wrong shape",
      withSpec({ params: [{ name: "a", value: 3 }] }),
      "InvalidParamType",
      `${p}spec.params[0] ("a") must be a string, an array of strings or an object of strings`,
    ],
    [
      "fixed not a boolean",
      withSpec({ params: [{ name: "a", value: "1", fixed: "yes" }] }),
      "InvalidParamType",
      `${p}spec.params[0].fixed ("a") must be true or false`,
    ],
    [
      "no entries",
      withSpec({ pipe: [] }),
      "InvalidPipe",
      `${p}spec.pipe is empty: name at least one file to pipe`,
    ],
    [
      "illegal key",
      withSpec({ pipe: [{ file: "/tmp/a", kind: "Secret", key: "my.key" }] }),
      "InvalidPipe",
      `${p}spec.pipe[0].key "my.key" must match ^[a-zA-Z0-9_-]+$ and have at most 63 characters`,
    ],
  ];
  for (const [name, obj, reason, message] of cases)
    assert.deepEqual(validatePipe(obj), { ok: false, reason, message }, name);
});

test("validatePipeEntries: every entry rule, InvalidPipe, named by field[i]", () => {
  const f = "spec.pipe";
  const cases: [string, unknown, string][] = [
    ["not a list", { file: "/tmp/a" }, `${f} must be a list of files to pipe, not an object`],
    [
      "too many",
      Array.from({ length: 65 }, (_, i) => ({ file: `/tmp/${i}`, kind: "Secret", key: `k${i}` })),
      `${f} has 65 entries; at most 64 are allowed`,
    ],
    ["entry not an object", ["/tmp/a"], `${f}[0] must be an object with file or envFile, kind and key`],
    [
      "both",
      [{ file: "/tmp/a", envFile: "/tmp/b", kind: "Secret", key: "k" }],
      `${f}[0] must set exactly one of file or envFile (it sets both)`,
    ],
    [
      "neither",
      [{ kind: "Secret", key: "k" }],
      `${f}[0] must set exactly one of file or envFile (it sets neither)`,
    ],
    ["path not a string", [{ file: 1, kind: "Secret", key: "k" }], `${f}[0].file must be a string`],
    [
      "relative path",
      [{ file: "tmp/a", kind: "Secret", key: "k" }],
      `${f}[0].file "tmp/a" must be an absolute path`,
    ],
    [
      "bad base name",
      [{ envFile: "/tmp/a b", kind: "Secret", key: "k" }],
      `${f}[0].envFile "/tmp/a b" has a file name (after the last '/') that must match ^[-._a-zA-Z0-9]+$`,
    ],
    [
      "bad kind",
      [{ file: "/tmp/a", kind: "Pod", key: "k" }],
      `${f}[0].kind is "Pod"; use Secret or ConfigMap`,
    ],
    ["no key", [{ file: "/tmp/a", kind: "Secret" }], `${f}[0].key is missing`],
    [
      "key with a space",
      [{ file: "/tmp/a", kind: "Secret", key: "a b" }],
      `${f}[0].key "a b" must match ^[a-zA-Z0-9_-]+$ and have at most 63 characters`,
    ],
    [
      "key too long",
      [{ file: "/tmp/a", kind: "Secret", key: "k".repeat(64) }],
      `${f}[0].key "${"k".repeat(64)}" must match ^[a-zA-Z0-9_-]+$ and have at most 63 characters`,
    ],
    [
      "duplicate keys",
      [
        { file: "/tmp/a", kind: "Secret", key: "k" },
        { file: "/tmp/b", kind: "ConfigMap", key: "x" },
        { envFile: "/tmp/c", kind: "ConfigMap", key: "k" },
      ],
      `${f}[2].key "k" is also the key of ${f}[0]; keys must be unique`,
    ],
  ];
  for (const [name, value, message] of cases)
    assert.deepEqual(validatePipeEntries(value, f), { ok: false, reason: "InvalidPipe", message }, name);
  // unknown fields are dropped from the checked entries
  assert.deepEqual(validatePipeEntries([{ file: "/tmp/a", kind: "Secret", key: "k", extra: 1 }], f), {
    ok: true,
    entries: [{ file: "/tmp/a", kind: "Secret", key: "k" }],
  });
});

test("checkFiles: a file outside the strategy's emptyDir is InvalidPipe naming the entry, the mount and the strategy", () => {
  const pipe = validatePipe({
    ...kep17Pipe(),
    spec: {
      ...kep17Pipe().spec,
      pipe: [...kep17Pipe().spec.pipe, { file: "/etc/passwd", kind: "Secret", key: "pw" }],
    },
  });
  assert.ok(pipe.ok);
  assert.deepEqual(checkFiles(pipe.pipe, checked(), "spec.pipe", 'Pipe "gencert"'), {
    ok: false,
    reason: "InvalidPipe",
    message:
      'Pipe "gencert": spec.pipe[2].file "/etc/passwd" is outside the emptyDir volume "shared-data", mounted at /tmp (PipeStrategy "gencert")',
  });
  const ok = validatePipe(kep17Pipe());
  assert.ok(ok.ok);
  const files = checkFiles(ok.pipe, checked(), "spec.pipe", 'Pipe "gencert"');
  assert.ok(files.ok);
  assert.deepEqual(
    files.files.map((f) => f.path),
    ["/tmp/MyKey.key", "/tmp/build.env"],
  );
});

test("notFound: PipeNotFound and StrategyNotFound, with the namespace for namespaced kinds", () => {
  assert.deepEqual(notFound("Pipe", "gencert", "ns"), {
    ok: false,
    reason: "PipeNotFound",
    message: 'Pipe "gencert" does not exist in namespace "ns"',
  });
  assert.deepEqual(notFound("PipeStrategy", "s", "ns"), {
    ok: false,
    reason: "StrategyNotFound",
    message: 'PipeStrategy "s" does not exist in namespace "ns"',
  });
  assert.deepEqual(notFound("ClusterPipeStrategy", "s", "ns"), {
    ok: false,
    reason: "StrategyNotFound",
    message: 'ClusterPipeStrategy "s" does not exist',
  });
});

// The list of bad input, each with its own terminal reason, through the pure steps in order.
test("bad input: each case fails with its specific reason", () => {
  const request = { namespace: "ns", name: "rr", uid: "u" };
  type Step = () => { ok: boolean; reason?: string };
  const pipeOf = (p: unknown) => validatePipe(p);
  const cases: [string, Step, string][] = [
    ["strategy missing", () => notFound("ClusterPipeStrategy", "nope", "ns"), "StrategyNotFound"],
    [
      "two init containers",
      () => validateStrategy(withPod({ initContainers: [{ name: "a" }, { name: "b" }] }), "PipeStrategy"),
      "InvalidStrategy",
    ],
    [
      "a regular container",
      () => validateStrategy(withPod({ containers: [{ name: "c", image: "x" }] }), "PipeStrategy"),
      "InvalidStrategy",
    ],
    [
      "a file path outside the emptyDir",
      () => {
        const p = pipeOf({
          ...kep17Pipe(),
          spec: { ...kep17Pipe().spec, pipe: [{ file: "/usr/share/MyKey.key", kind: "Secret", key: "k" }] },
        });
        return p.ok ? checkFiles(p.pipe, checked(), "spec.pipe", "Pipe") : p;
      },
      "InvalidPipe",
    ],
    [
      "a key with illegal characters",
      () =>
        pipeOf({
          ...kep17Pipe(),
          spec: { ...kep17Pipe().spec, pipe: [{ file: "/tmp/a", kind: "Secret", key: "a/b" }] },
        }),
      "InvalidPipe",
    ],
    [
      "duplicate keys",
      () =>
        readRequest([
          { name: "strategy", value: "gencert" },
          { name: "strategyKind", value: "PipeStrategy" },
          {
            name: "files",
            value: "[{file: /tmp/a, kind: Secret, key: k}, {file: /tmp/b, kind: Secret, key: k}]",
          },
        ]),
      "InvalidPipe",
    ],
    [
      "a param the strategy does not declare",
      () =>
        buildPod({
          request,
          strategy: checked(),
          pipeName: "gencert",
          params: [
            { name: "cn", value: "x" },
            { name: "colour", value: "blue" },
          ],
        }),
      "UnknownParam",
    ],
  ];
  for (const [name, step, reason] of cases) {
    const r = step();
    assert.equal(r.ok, false, name);
    assert.equal(r.reason, reason, name);
  }
});
