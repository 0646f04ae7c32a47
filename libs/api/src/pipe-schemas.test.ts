// The pipe kinds' CRDs: structural, bounded for CEL, with KEP-17's rules in
// place, and a KEP-17-shaped strategy and Pipe accepted by the OpenAPI part
// (ajv). ajv does not evaluate CEL; e2e/scenarios/pipe-crd-validation.test.ts
// checks the rules on a real apiserver.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Ajv, type ValidateFunction } from "ajv";
import { generatedFiles } from "./crds.ts";
import { clusterPipeStrategyCrd, pipeCrd, pipeStrategyCrd } from "./pipe-crds.ts";
import { pipeSchema, pipeStrategySchema } from "./pipe-schemas.ts";
import type { Pipe, PipeStrategy } from "./pipes.ts";
import type { JSONSchemaProps } from "./schema-types.ts";

function validator(schema: JSONSchemaProps): ValidateFunction {
  const ajv = new Ajv({ allErrors: true, strict: true });
  for (const keyword of [
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-validations",
  ])
    ajv.addKeyword({ keyword, schemaType: ["boolean", "string", "array"] });
  return ajv.compile(schema);
}

const validateStrategy = validator(pipeStrategySchema(false));
const validatePipe = validator(pipeSchema());

function errorsOf(validate: ValidateFunction, obj: unknown): string[] {
  return validate(obj) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

/** KEP-17's example pod, as a strategy: openssl in the init container, the emptyDir at /tmp. */
const kep17Strategy: PipeStrategy = {
  apiVersion: "quarry.dev/v1alpha1",
  kind: "PipeStrategy",
  metadata: {
    name: "gencert",
    namespace: "ns",
    annotations: { "kubernetes.io/egress-bandwidth": "10M" },
  },
  spec: {
    params: [
      { name: "days", type: "string", default: "365", description: "Validity." },
      { name: "subject", default: { cn: "example.com" }, properties: { cn: { type: "string" } } },
      { name: "extra", type: "array", default: [] },
    ],
    pod: {
      volumes: [
        { name: "shared-data", emptyDir: {} },
        { name: "ca", secret: { secretName: "ca" } },
      ],
      initContainers: [
        {
          name: "init",
          image: "busybox",
          command: ["/bin/sh", "-c"],
          args: [
            "openssl req -new -newkey rsa:4096 -x509 -sha256 -days $(params.days) -nodes -out /tmp/MyCertificate.crt -keyout /tmp/MyKey.key",
          ],
          env: [{ name: "CN", value: "$(params.subject.cn)" }],
          volumeMounts: [
            { name: "shared-data", mountPath: "/tmp" },
            { name: "ca", mountPath: "/ca", readOnly: true },
          ],
          resources: { limits: { cpu: "100m" } },
        },
      ],
      restartPolicy: "OnFailure",
      securityContext: { runAsNonRoot: true },
    },
  },
};

const kep17Pipe: Pipe = {
  apiVersion: "quarry.dev/v1alpha1",
  kind: "Pipe",
  metadata: { name: "gencert", namespace: "ns" },
  spec: {
    strategy: { kind: "PipeStrategy", name: "gencert" },
    params: [{ name: "days", value: "30" }],
    pipe: [
      { file: "/tmp/MyKey.key", kind: "Secret", key: "Mycertificate" },
      { file: "/tmp/MyCertificate.crt", kind: "ConfigMap", key: "my_cert-pub" },
      { envFile: "/tmp/out/build.env", kind: "ConfigMap", key: "env" },
    ],
  },
};

test("a KEP-17-shaped strategy and Pipe pass the schemas; unknown pod fields are kept", () => {
  assert.deepEqual(errorsOf(validateStrategy, kep17Strategy), []);
  assert.deepEqual(errorsOf(validatePipe, kep17Pipe), []);
  const noRestart = structuredClone(kep17Strategy);
  delete noRestart.spec.pod.restartPolicy;
  assert.deepEqual(errorsOf(validateStrategy, noRestart), []);
  assert.deepEqual(
    errorsOf(validateStrategy, {
      ...noRestart,
      spec: { ...noRestart.spec, pod: { ...noRestart.spec.pod, restartPolicy: "" } },
    }),
    [],
  );
});

test("a strategy's outputs, allowInlineFiles and (cluster only) allowedNamespaces; a Pipe's fixed params", () => {
  const validateCluster = validator(pipeStrategySchema(true));
  const spec = {
    ...kep17Strategy.spec,
    outputs: [
      { path: "/tmp/MyCertificate.crt", kind: "ConfigMap" },
      { path: "/tmp/MyKey.key", kind: "Secret" },
    ],
    allowInlineFiles: true,
  };
  assert.deepEqual(errorsOf(validateStrategy, { ...kep17Strategy, spec }), []);
  const cluster = {
    ...kep17Strategy,
    kind: "ClusterPipeStrategy",
    spec: { ...spec, allowedNamespaces: ["team-a", "shop-*", "*"] },
  };
  assert.deepEqual(errorsOf(validateCluster, cluster), []);
  const pipe = {
    ...kep17Pipe,
    spec: { ...kep17Pipe.spec, params: [{ name: "days", value: "30", fixed: true }] },
  };
  assert.deepEqual(errorsOf(validatePipe, pipe), []);
  const cases: [ValidateFunction, unknown, RegExp][] = [
    [
      validateStrategy,
      { ...kep17Strategy, spec: { ...spec, outputs: [{ path: "/tmp/a" }] } },
      /^\/spec\/outputs\/0 must have required property 'kind'$/,
    ],
    [
      validateStrategy,
      { ...kep17Strategy, spec: { ...spec, outputs: [{ path: "/tmp/a", kind: "Pod" }] } },
      /^\/spec\/outputs\/0\/kind must be equal to one of the allowed values$/,
    ],
    [
      validateStrategy,
      { ...kep17Strategy, spec: { ...spec, allowInlineFiles: "yes" } },
      /^\/spec\/allowInlineFiles must be boolean$/,
    ],
    [
      validateCluster,
      { ...cluster, spec: { ...cluster.spec, allowedNamespaces: ["Team-A"] } },
      /^\/spec\/allowedNamespaces\/0 must match pattern/,
    ],
    [
      validateCluster,
      { ...cluster, spec: { ...cluster.spec, allowedNamespaces: ["a/b"] } },
      /^\/spec\/allowedNamespaces\/0 must match pattern/,
    ],
    [
      validatePipe,
      { ...pipe, spec: { ...pipe.spec, params: [{ name: "days", value: "1", fixed: "yes" }] } },
      /^\/spec\/params\/0\/fixed must be boolean$/,
    ],
  ];
  for (const [validate, obj, expected] of cases) {
    const errors = errorsOf(validate, obj);
    assert.ok(
      errors.some((e) => expected.test(e)),
      `${expected} not in ${JSON.stringify(errors)}`,
    );
  }
  // a PipeStrategy lives in one namespace: it has no allowedNamespaces (the apiserver prunes it)
  assert.equal(pipeStrategySchema(false).properties?.spec?.properties?.allowedNamespaces, undefined);
  const outputs = pipeStrategySchema(false).properties?.spec?.properties?.outputs;
  assert.deepEqual(
    [outputs?.["x-kubernetes-list-type"], outputs?.["x-kubernetes-list-map-keys"]],
    ["map", ["path"]],
    "a path is declared once: the apiserver refuses a duplicate key",
  );
});

test("the OpenAPI part rejects what it can state without CEL", () => {
  const withPod = (pod: Record<string, unknown>) => ({
    ...kep17Strategy,
    spec: { ...kep17Strategy.spec, pod: { ...kep17Strategy.spec.pod, ...pod } },
  });
  const withEntry = (entry: Record<string, unknown>) => ({
    ...kep17Pipe,
    spec: { ...kep17Pipe.spec, pipe: [entry] },
  });
  const cases: [ValidateFunction, unknown, RegExp][] = [
    [
      validateStrategy,
      withPod({ restartPolicy: "Always" }),
      /^\/spec\/pod\/restartPolicy must be equal to one of the allowed values$/,
    ],
    [
      validateStrategy,
      withPod({ restartPolicy: "Never" }),
      /restartPolicy must be equal to one of the allowed values/,
    ],
    [
      validateStrategy,
      { ...kep17Strategy, spec: { params: [] } },
      /^\/spec must have required property 'pod'$/,
    ],
    [
      validateStrategy,
      { ...kep17Strategy, spec: { ...kep17Strategy.spec, params: [{ name: "1bad" }] } },
      /^\/spec\/params\/0\/name must match pattern/,
    ],
    [
      validateStrategy,
      { ...kep17Strategy, spec: { ...kep17Strategy.spec, params: [{ name: "x", type: "number" }] } },
      /^\/spec\/params\/0\/type must be equal to one of the allowed values$/,
    ],
    [
      validatePipe,
      withEntry({ file: "/tmp/a", kind: "Pod", key: "k" }),
      /^\/spec\/pipe\/0\/kind must be equal to one of the allowed values$/,
    ],
    [
      validatePipe,
      withEntry({ file: "/tmp/a", kind: "Secret", key: "a.b" }),
      /^\/spec\/pipe\/0\/key must match pattern "\^\[a-zA-Z0-9_-\]\+\$"$/,
    ],
    [
      validatePipe,
      withEntry({ file: "/tmp/a", kind: "Secret", key: "k".repeat(64) }),
      /^\/spec\/pipe\/0\/key must NOT have more than 63 characters$/,
    ],
    [
      validatePipe,
      withEntry({ file: "/tmp/a", kind: "Secret" }),
      /^\/spec\/pipe\/0 must have required property 'key'$/,
    ],
    [
      validatePipe,
      { ...kep17Pipe, spec: { ...kep17Pipe.spec, pipe: [] } },
      /^\/spec\/pipe must NOT have fewer than 1 items$/,
    ],
    [
      validatePipe,
      { ...kep17Pipe, spec: { ...kep17Pipe.spec, strategy: { kind: "BuildStrategy", name: "x" } } },
      /^\/spec\/strategy\/kind must be equal to one of the allowed values$/,
    ],
    [
      validatePipe,
      { ...kep17Pipe, spec: { ...kep17Pipe.spec, strategy: { kind: "PipeStrategy" } } },
      /^\/spec\/strategy must have required property 'name'$/,
    ],
  ];
  for (const [validate, obj, expected] of cases) {
    const errors = errorsOf(validate, obj);
    assert.ok(
      errors.some((e) => expected.test(e)),
      `${expected} not in ${JSON.stringify(errors)}`,
    );
  }
});

/** The apiserver's structural-schema rule: every node has a type, except preserve-unknown-fields nodes. */
function untypedNodes(schema: JSONSchemaProps, path: string): string[] {
  const here = schema.type || schema["x-kubernetes-preserve-unknown-fields"] ? [] : [path];
  const children = Object.entries(schema.properties ?? {}).flatMap(([k, v]) =>
    untypedNodes(v, `${path}.${k}`),
  );
  const items = schema.items ? untypedNodes(schema.items, `${path}[]`) : [];
  const extra =
    typeof schema.additionalProperties === "object"
      ? untypedNodes(schema.additionalProperties, `${path}{}`)
      : [];
  return [...here, ...children, ...items, ...extra];
}

/** Every CEL rule, with the path of the node it sits on. */
function celRules(schema: JSONSchemaProps, path: string): { path: string; rule: string; message?: string }[] {
  const here = (schema["x-kubernetes-validations"] ?? []).map((v) => ({
    path,
    rule: v.rule,
    message: v.message,
  }));
  const children = Object.entries(schema.properties ?? {}).flatMap(([k, v]) => celRules(v, `${path}.${k}`));
  const items = schema.items ? celRules(schema.items, `${path}[]`) : [];
  return [...here, ...children, ...items];
}

/** What the CEL cost estimator needs: every list and string under a rule has a bound. */
function unboundedUnderRules(schema: JSONSchemaProps, path: string, underRule: boolean): string[] {
  const walked = underRule || (schema["x-kubernetes-validations"]?.length ?? 0) > 0;
  const here =
    walked &&
    ((schema.type === "array" && schema.maxItems === undefined) ||
      (schema.type === "string" && schema.maxLength === undefined && schema.enum === undefined))
      ? [path]
      : [];
  const children = Object.entries(schema.properties ?? {}).flatMap(([k, v]) =>
    unboundedUnderRules(v, `${path}.${k}`, walked),
  );
  const items = schema.items ? unboundedUnderRules(schema.items, `${path}[]`, walked) : [];
  return [...here, ...children, ...items];
}

const crds = [
  { crd: pipeCrd(), name: "pipes.quarry.dev", scope: "Namespaced", columns: ["Strategy", "Age"] },
  {
    crd: pipeStrategyCrd(),
    name: "pipestrategies.quarry.dev",
    scope: "Namespaced",
    columns: ["Init Image", "Age"],
  },
  {
    crd: clusterPipeStrategyCrd(),
    name: "clusterpipestrategies.quarry.dev",
    scope: "Cluster",
    columns: ["Init Image", "Age"],
  },
];

test("the pipe CRDs: structural, quarry.dev/v1alpha1, scope, columns, the quarry category, bounded under CEL", () => {
  for (const { crd, name, scope, columns } of crds) {
    assert.equal(crd.metadata.name, name);
    assert.equal(crd.spec.group, "quarry.dev");
    assert.equal(crd.spec.scope, scope);
    assert.deepEqual(crd.spec.names.categories, ["quarry"]);
    assert.equal(crd.spec.versions.length, 1);
    const [v] = crd.spec.versions;
    assert.equal(v?.name, "v1alpha1");
    assert.equal(v?.served && v.storage, true);
    assert.deepEqual(
      v?.additionalPrinterColumns?.map((c) => c.name),
      columns,
      name,
    );
    assert.deepEqual(untypedNodes(v!.schema.openAPIV3Schema, ""), [], name);
    assert.deepEqual(unboundedUnderRules(v!.schema.openAPIV3Schema, "", false), [], name);
  }
});

test("the pipe CRDs are generated at the top of libs/api/crds, so every install applies them", () => {
  const names = Object.keys(generatedFiles());
  for (const { name } of crds) assert.ok(names.includes(`${name}.yaml`), name);
});

test("the strategy CRDs carry KEP-17's pod rules, the param rules and the output paths' rules", () => {
  for (const crd of [pipeStrategyCrd(), clusterPipeStrategyCrd()]) {
    const rules = celRules(crd.spec.versions[0]!.schema.openAPIV3Schema, "");
    assert.deepEqual(
      rules.map((r) => [r.path, r.message]),
      [
        [".spec.params", "param names must be unique"],
        [
          ".spec.params",
          "params may not be named pipe, strategy, strategyKind, files: those are the pipe resolver's own request params",
        ],
        [".spec.pod", "a pipe pod needs exactly one init container: the one that writes the piped files"],
        [
          ".spec.pod",
          "a pipe pod has no containers of its own (Quarry adds the one that waits while the files are copied)",
        ],
        [
          ".spec.pod",
          "a pipe pod needs exactly one emptyDir volume: where the init container writes the piped files",
        ],
        [".spec.pod", "the init container must mount the emptyDir volume, once"],
        [
          ".spec.outputs[].path",
          "must be an absolute path (under the emptyDir the strategy's init container mounts)",
        ],
        [".spec.outputs[].path", "must be a clean path: no empty, '.' or '..' segments and no trailing '/'"],
        [
          ".spec.outputs[].path",
          "the file's name (after the last '/') becomes a data key: it must match ^[-._a-zA-Z0-9]+$, not be '.' and not start with '..'",
        ],
      ],
    );
  }
});

test("the Pipe CRD carries the entry rules: clean absolute paths, data-key base names, one of file/envFile, unique keys", () => {
  const rules = celRules(pipeCrd().spec.versions[0]!.schema.openAPIV3Schema, "");
  assert.deepEqual(
    rules.map((r) => r.path),
    [
      ".spec.params",
      ".spec.pipe",
      ".spec.pipe[]",
      ".spec.pipe[].file",
      ".spec.pipe[].file",
      ".spec.pipe[].file",
      ".spec.pipe[].envFile",
      ".spec.pipe[].envFile",
      ".spec.pipe[].envFile",
    ],
  );
  const byPath = (p: string) => rules.filter((r) => r.path === p).map((r) => r.rule);
  assert.deepEqual(byPath(".spec.pipe"), ["self.all(e, self.exists_one(f, f.key == e.key))"]);
  assert.deepEqual(byPath(".spec.pipe[]"), ["has(self.file) != has(self.envFile)"]);
  assert.deepEqual(byPath(".spec.pipe[].file"), byPath(".spec.pipe[].envFile"));
  assert.match(byPath(".spec.pipe[].file").join(" "), /matches\('\^\[-\._a-zA-Z0-9\]\+\$'\)/);
});
