import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { loadAll } from "js-yaml";
import {
  CONVERSION_CRDS_SUBDIR,
  generatedFiles,
  lifecycleDeletesPolicy,
  lifecycleWritesPolicy,
  RESOLVER_SERVICE_ACCOUNTS,
  resolutionRequestCrd,
  resolutionRequestCrdWithConversion,
  resolverLabelPolicy,
  resolverTypeNames,
  resolverWritesPolicies,
  resolverWritesPolicy,
} from "./crds.ts";
import { CRDS_DIR, staleFiles } from "./gen-crds.ts";
import { customRunCrd, RUN_CRDS_SUBDIR, runCrd } from "./run-crds.ts";
import type { JSONSchemaProps } from "./schema-types.ts";

test("committed CRD files match the generator (run `node libs/api/src/gen-crds.ts`)", () => {
  for (const [name, content] of Object.entries(generatedFiles())) {
    assert.equal(readFileSync(join(CRDS_DIR, name), "utf8"), content, `${name} is stale`);
  }
  assert.deepEqual(staleFiles(), []);
});

test("gen-crds --check exits 0 now, and 1 against a directory of stale files", () => {
  const script = fileURLToPath(new URL("./gen-crds.ts", import.meta.url));
  execFileSync(process.execPath, [script, "--check"], { stdio: "pipe" });
  assert.deepEqual(staleFiles("/nonexistent").length, Object.keys(generatedFiles()).length);
});

test("the YAML parses back to the objects", () => {
  const files = generatedFiles();
  assert.deepEqual(loadAll(files["resolutionrequests.resolution.tekton.dev.yaml"] ?? ""), [
    resolutionRequestCrd(),
  ]);
  assert.deepEqual(loadAll(files["resolutionrequest-policy.yaml"] ?? ""), [
    ...resolverLabelPolicy(),
    ...lifecycleWritesPolicy(),
    ...lifecycleDeletesPolicy(),
    ...resolverWritesPolicies(),
  ]);
  assert.deepEqual(loadAll(files[`${RUN_CRDS_SUBDIR}/runs.tekton.dev.yaml`] ?? ""), [runCrd()]);
  assert.deepEqual(loadAll(files[`${RUN_CRDS_SUBDIR}/customruns.tekton.dev.yaml`] ?? ""), [customRunCrd()]);
});

test("a resolver's type names: the canonical one first, then the aliases that map to it", () => {
  const table: [string, string[]][] = [
    ["git", ["git"]],
    ["bundles", ["bundles", "bundle"]],
    ["cluster", ["cluster", "in-cluster"]],
    ["pipe", ["pipe"]],
    ["http", ["http"]],
  ];
  for (const [type, names] of table) assert.deepEqual(resolverTypeNames(type), names, type);
});

test("one status-write policy and binding per resolver ServiceAccount, matched by name in any namespace", () => {
  const docs = resolverWritesPolicies();
  assert.equal(docs.length, 2 * Object.keys(RESOLVER_SERVICE_ACCOUNTS).length);
  const [policy, binding] = resolverWritesPolicy("quarry-bundle-resolver", "bundles") as unknown as [
    { spec: Record<string, unknown> & { matchConditions: { expression: string }[] } },
    { spec: Record<string, unknown> },
  ];
  assert.equal(binding.spec.policyName, "quarry-bundle-resolver-writes");
  assert.deepEqual(binding.spec.validationActions, ["Deny"]);
  // no namespaceSelector: a namespace label cannot lift it
  assert.equal(binding.spec.matchResources, undefined);
  assert.match(policy.spec.matchConditions[0]?.expression ?? "", /endsWith\(':quarry-bundle-resolver'\)/);
  assert.deepEqual(
    (policy.spec.validations as { expression: string }[]).map((v) => v.expression),
    ["variables.oldType in ['bundles', 'bundle'] && variables.newType in ['bundles', 'bundle']"],
  );
});

test("the optional run CRDs (and the conversion CRD) are generated apart, where an installer of libs/api/crds/*.yaml skips them", () => {
  const names = Object.keys(generatedFiles());
  assert.deepEqual(
    names.filter((n) => n.startsWith(`${RUN_CRDS_SUBDIR}/`)),
    [`${RUN_CRDS_SUBDIR}/runs.tekton.dev.yaml`, `${RUN_CRDS_SUBDIR}/customruns.tekton.dev.yaml`],
  );
  assert.ok(names.filter((n) => !n.includes("/")).every((n) => !n.includes("runs.tekton.dev")));
  assert.ok(names.filter((n) => !n.includes("/")).every((n) => !n.startsWith(CONVERSION_CRDS_SUBDIR)));
});

// The apiserver's structural-schema rule: every node has a type, except preserve-unknown-fields nodes.
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

test("the CRD schema is structural and serves v1beta1 only", () => {
  const crd = resolutionRequestCrd();
  assert.equal(crd.spec.versions.length, 1);
  const [v] = crd.spec.versions;
  assert.equal(v?.name, "v1beta1");
  assert.equal(v?.storage, true);
  assert.deepEqual(untypedNodes(v!.schema.openAPIV3Schema, ""), []);
  assert.deepEqual(
    v?.additionalPrinterColumns?.map((c) => c.name),
    ["Succeeded", "Reason", "Resolver", "Age"],
  );
});

test("the run CRDs are structural, serve one version each, with status subresource, columns and categories", () => {
  for (const [crd, version] of [
    [runCrd(), "v1alpha1"],
    [customRunCrd(), "v1beta1"],
  ] as const) {
    assert.equal(crd.spec.group, "tekton.dev");
    assert.deepEqual(crd.spec.names.categories, ["tekton", "tekton-pipelines"]);
    assert.equal(crd.spec.versions.length, 1);
    const [v] = crd.spec.versions;
    assert.equal(v?.name, version);
    assert.equal(v?.served && v.storage, true);
    assert.deepEqual(v?.subresources, { status: {} });
    assert.deepEqual(untypedNodes(v!.schema.openAPIV3Schema, ""), []);
    assert.deepEqual(
      v?.additionalPrinterColumns?.map((c) => c.name),
      ["Succeeded", "Reason", "Kind", "StartTime", "CompletionTime"],
    );
  }
  assert.equal(runCrd().metadata.name, "runs.tekton.dev");
  assert.equal(customRunCrd().metadata.name, "customruns.tekton.dev");
});

/** Every CEL rule in a schema, with the path of the node it sits on. */
function celRules(schema: JSONSchemaProps, path: string): { path: string; rule: string }[] {
  const here = (schema["x-kubernetes-validations"] ?? []).map((v) => ({ path, rule: v.rule }));
  const children = Object.entries(schema.properties ?? {}).flatMap(([k, v]) => celRules(v, `${path}.${k}`));
  const items = schema.items ? celRules(schema.items, `${path}[]`) : [];
  return [...here, ...children, ...items];
}

test("the run CRDs carry the CEL rules: one of ref/spec, statusMessage with status, unique params", () => {
  const unique = "self.all(p, self.exists_one(q, q.name == p.name))";
  const statusMessage =
    "!has(self.statusMessage) || size(self.statusMessage) == 0 || (has(self.status) && size(self.status) > 0)";
  assert.deepEqual(celRules(runCrd().spec.versions[0]!.schema.openAPIV3Schema, ""), [
    { path: ".spec", rule: "has(self.ref) || has(self.spec)" },
    { path: ".spec", rule: "!(has(self.ref) && has(self.spec))" },
    { path: ".spec", rule: statusMessage },
    { path: ".spec.ref.params", rule: unique },
    { path: ".spec.params", rule: unique },
  ]);
  assert.deepEqual(celRules(customRunCrd().spec.versions[0]!.schema.openAPIV3Schema, ""), [
    { path: ".spec", rule: "has(self.customRef) || has(self.customSpec)" },
    { path: ".spec", rule: "!(has(self.customRef) && has(self.customSpec))" },
    { path: ".spec", rule: statusMessage },
    { path: ".spec.customRef.params", rule: unique },
    { path: ".spec.params", rule: unique },
  ]);
});

/** What the apiserver's CEL cost estimator needs: every list and string a rule walks has a bound. */
function unboundedUnderRules(schema: JSONSchemaProps, path: string, underRule: boolean): string[] {
  const walked = underRule || (schema["x-kubernetes-validations"]?.length ?? 0) > 0;
  const here =
    walked &&
    ((schema.type === "array" && schema.maxItems === undefined) ||
      (schema.type === "string" && schema.maxLength === undefined && schema.enum === undefined))
      ? [path]
      : [];
  // a rule on a node can reach its descendants, so they count as walked too
  const children = Object.entries(schema.properties ?? {}).flatMap(([k, v]) =>
    unboundedUnderRules(v, `${path}.${k}`, walked),
  );
  const items = schema.items ? unboundedUnderRules(schema.items, `${path}[]`, walked) : [];
  return [...here, ...children, ...items];
}

test("lists and strings the run CRDs' param rules walk are bounded", () => {
  for (const crd of [runCrd(), customRunCrd()]) {
    const spec = crd.spec.versions[0]!.schema.openAPIV3Schema.properties!.spec!;
    const ref = spec.properties!.ref ?? spec.properties!.customRef!;
    for (const params of [spec.properties!.params!, ref.properties!.params!]) {
      assert.deepEqual(unboundedUnderRules(params, "params", false), []);
    }
  }
});

test("the conversion CRD serves v1alpha1 (string-map params) and v1beta1, stores v1beta1, converts by webhook", () => {
  const files = generatedFiles();
  const crd = resolutionRequestCrdWithConversion();
  assert.deepEqual(
    loadAll(files[`${CONVERSION_CRDS_SUBDIR}/resolutionrequests.resolution.tekton.dev.yaml`] ?? ""),
    [crd],
  );
  assert.deepEqual(
    crd.spec.versions.map((v) => [v.name, v.served, v.storage]),
    [
      ["v1alpha1", true, false],
      ["v1beta1", true, true],
    ],
  );
  const params = crd.spec.versions[0]?.schema.openAPIV3Schema.properties?.spec?.properties?.params;
  assert.deepEqual(params?.additionalProperties, { type: "string" });
  assert.equal(crd.spec.conversion?.strategy, "Webhook");
  assert.deepEqual(crd.spec.conversion?.webhook?.conversionReviewVersions, ["v1"]);
  assert.equal(crd.spec.conversion?.webhook?.clientConfig.caBundle, undefined);
  // the default CRD has neither
  assert.equal(resolutionRequestCrd().spec.conversion, undefined);
  assert.deepEqual(
    resolutionRequestCrd().spec.versions.map((v) => v.name),
    ["v1beta1"],
  );
});
