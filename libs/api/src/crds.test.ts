import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { loadAll } from "js-yaml";
import { generatedFiles, lifecycleWritesPolicy, resolutionRequestCrd, resolverLabelPolicy } from "./crds.ts";
import { CRDS_DIR, staleFiles } from "./gen-crds.ts";
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
  ]);
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
