import assert from "node:assert/strict";
import { test } from "node:test";
import type { OwnerReference } from "@quarry/api";
import { load } from "js-yaml";
import type { FileToCopy } from "./files.ts";
import {
  isOwnOutput,
  outputData,
  outputObject,
  outputOwner,
  type PipeOutput,
  pipeResult,
  sha256Hex,
  statusData,
} from "./objects.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const run: OwnerReference = {
  apiVersion: "tekton.dev/v1beta1",
  kind: "CustomRun",
  name: "build-1",
  uid: "run-uid",
};

test("outputOwner: the request's controller owner (as a plain owner), else the request", () => {
  const cases: [string, OwnerReference[] | undefined, OwnerReference][] = [
    [
      "a run controls the request",
      [
        { apiVersion: "v1", kind: "ConfigMap", name: "other", uid: "x" },
        { ...run, controller: true, blockOwnerDeletion: true },
      ],
      run,
    ],
    [
      "no controller owner",
      [{ apiVersion: "v1", kind: "ConfigMap", name: "other", uid: "x" }],
      { apiVersion: "resolution.tekton.dev/v1beta1", kind: "ResolutionRequest", name: "rr", uid: "rr-uid" },
    ],
    [
      "no owners",
      undefined,
      { apiVersion: "resolution.tekton.dev/v1beta1", kind: "ResolutionRequest", name: "rr", uid: "rr-uid" },
    ],
  ];
  for (const [name, ownerReferences, want] of cases)
    assert.deepEqual(outputOwner({ metadata: { name: "rr", uid: "rr-uid", ownerReferences } }), want, name);
});

const file: FileToCopy = {
  key: "Mycertificate",
  kind: "Secret",
  path: "/tmp/MyKey.key",
  format: "file",
  dataKey: "MyKey.key",
};
const envFile: FileToCopy = {
  key: "env",
  kind: "ConfigMap",
  path: "/tmp/build.env",
  format: "envFile",
  dataKey: "build.env",
};

test("outputData: a file under its base name, an envFile as one key per line", () => {
  const key = bytes("-----BEGIN PRIVATE KEY-----\n");
  assert.deepEqual(outputData(file, key), { ok: true, data: new Map([["MyKey.key", key]]) });
  assert.deepEqual(outputData(envFile, bytes("# x\nA=1\nB=two\n")), {
    ok: true,
    data: new Map([
      ["A", bytes("1")],
      ["B", bytes("two")],
    ]),
  });
  const binary = new Uint8Array([0, 255, 10, 13]);
  assert.deepEqual(outputData({ ...file, kind: "ConfigMap" }, binary), {
    ok: true,
    data: new Map([["MyKey.key", binary]]),
  });
  const max = new Uint8Array(1024 * 1024);
  assert.equal(outputData(file, max).ok, true, "exactly 1 MiB is allowed");
});

test("outputData: too large and malformed files fail without their content in the message", () => {
  const secret = "hunter2-s3cr3t";
  const cases: [string, FileToCopy, Uint8Array, string, string][] = [
    [
      "over 1 MiB",
      file,
      new Uint8Array(1024 * 1024 + 1),
      "TooLarge",
      'file "/tmp/MyKey.key" (key "Mycertificate") has 1048577 bytes; at most 1048576 (1 MiB) may be piped',
    ],
    [
      "envFile over 1 MiB",
      envFile,
      new Uint8Array(2 * 1024 * 1024),
      "TooLarge",
      'envFile "/tmp/build.env" (key "env") has 2097152 bytes; at most 1048576 (1 MiB) may be piped',
    ],
    [
      "malformed envFile",
      { ...envFile, kind: "Secret" },
      bytes(`A=1\n${secret}\n`),
      "InvalidEnvFile",
      'envFile "/tmp/build.env" (key "env"): line 2 is not KEY=VALUE (it has no "=")',
    ],
  ];
  for (const [name, f, data, reason, message] of cases) {
    const r = outputData(f, data);
    assert.deepEqual(r, { ok: false, reason, message }, name);
    assert.ok(!JSON.stringify(r).includes(secret));
  }
});

test("outputObject: a Secret (data) or a ConfigMap (binaryData), named <owner>-<pipe>-<key>, labelled, owned", () => {
  const data = new Map([
    ["MyKey.key", bytes("key")],
    ["other", new Uint8Array([0, 1])],
  ]);
  const meta = (name: string, key: string) => ({
    name,
    namespace: "ns",
    labels: {
      "quarry.dev/pipe": "gencert",
      "quarry.dev/request": "rr",
      "app.kubernetes.io/managed-by": "quarry",
    },
    annotations: { "quarry.dev/pipe-key": key },
    ownerReferences: [run],
  });
  const input = { namespace: "ns", pipeName: "gencert", requestName: "rr", owner: run, data };
  assert.deepEqual(outputObject({ ...input, file: { key: "tls-key", kind: "Secret" } }), {
    apiVersion: "v1",
    kind: "Secret",
    metadata: meta("build-1-gencert-tls-key", "tls-key"),
    type: "Opaque",
    data: { "MyKey.key": "a2V5", other: "AAE=" },
  });
  const cm = outputObject({ ...input, file: { key: "Env_Vars", kind: "ConfigMap" } });
  assert.equal(cm.kind, "ConfigMap");
  assert.match(cm.metadata.name ?? "", /^build-1-gencert-env-vars-[0-9a-f]{16}$/);
  assert.deepEqual(cm.kind === "ConfigMap" && cm.binaryData, { "MyKey.key": "a2V5", other: "AAE=" });
  assert.deepEqual(cm.metadata.annotations, { "quarry.dev/pipe-key": "Env_Vars" });
  // a byte view into a larger buffer is encoded by its own bytes only
  const big = bytes("xxKEYxx");
  const view = outputObject({
    ...input,
    data: new Map([["k", big.subarray(2, 5)]]),
    file: { key: "k", kind: "Secret" },
  });
  assert.deepEqual(view.kind === "Secret" && view.data, { k: "S0VZ" });
});

test("isOwnOutput: only Quarry's object for the same pipe, key and owner may stand for the output", () => {
  const desired: PipeOutput = outputObject({
    namespace: "ns",
    pipeName: "gencert",
    requestName: "rr",
    owner: run,
    data: new Map(),
    file: { key: "k", kind: "Secret" },
  });
  const same = structuredClone(desired.metadata);
  const cases: [string, typeof same, boolean][] = [
    [
      "the same run's earlier attempt",
      { ...same, labels: { ...same.labels, "quarry.dev/request": "rr-old" } },
      true,
    ],
    ["someone's own Secret", { name: same.name, namespace: "ns" }, false],
    ["another owner", { ...same, ownerReferences: [{ ...run, uid: "other-run" }] }, false],
    ["another pipe", { ...same, labels: { ...same.labels, "quarry.dev/pipe": "gen" } }, false],
    ["another key", { ...same, annotations: { "quarry.dev/pipe-key": "K" } }, false],
    ["not Quarry's", { ...same, labels: { ...same.labels, "app.kubernetes.io/managed-by": "helm" } }, false],
  ];
  for (const [name, metadata, want] of cases) assert.equal(isOwnOutput({ metadata }, desired), want, name);
});

test("statusData: a YAML list of {key, kind, name, sha256 | hmacSha256} in pipe order", () => {
  assert.equal(sha256Hex(bytes("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // RFC 4231 test case 2: a Secret's digest is keyed, so its plain SHA-256 is nowhere
  const key = bytes("Jefe");
  const results = [
    pipeResult(
      { key: "Mycertificate", kind: "Secret" },
      "build-1-gencert-mycertificate-0123456789abcdef",
      bytes("what do ya want for nothing?"),
      key,
    ),
    pipeResult({ key: "env", kind: "ConfigMap" }, "build-1-gencert-env", bytes(""), key),
  ];
  assert.throws(
    () => pipeResult({ key: "k", kind: "Secret" }, "s", bytes("abc")),
    /the Secret output "s" needs the digest key/,
  );
  const yaml = statusData(results);
  assert.equal(
    yaml,
    [
      "- key: Mycertificate",
      "  kind: Secret",
      "  name: build-1-gencert-mycertificate-0123456789abcdef",
      "  hmacSha256: 5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
      "- key: env",
      "  kind: ConfigMap",
      "  name: build-1-gencert-env",
      "  sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
      "",
    ].join("\n"),
  );
  assert.deepEqual(load(yaml), results);
  // keys that YAML would read as other types stay strings
  const odd = statusData([
    pipeResult({ key: "123", kind: "ConfigMap" }, "a", bytes("")),
    pipeResult({ key: "true", kind: "ConfigMap" }, "b", bytes("")),
  ]);
  assert.deepEqual(
    (load(odd) as { key: unknown }[]).map((r) => r.key),
    ["123", "true"],
  );
  assert.equal(statusData([]), "[]\n");
});
