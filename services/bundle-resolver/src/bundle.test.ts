import assert from "node:assert/strict";
import { test } from "node:test";
import type { Descriptor, ImageManifest } from "@quarry/oci";
import { ResolutionError } from "@quarry/resolver-sdk";
import {
  checkBundle,
  findLayer,
  LAYER_API_VERSION,
  LAYER_KIND,
  LAYER_NAME,
  resultAnnotations,
} from "./bundle.ts";

const layer = (kind: string, name: string, extra: Record<string, string> = {}): Descriptor => ({
  mediaType: "application/vnd.docker.image.rootfs.diff.tar.gzip",
  digest: `sha256:${"a".repeat(64)}`,
  size: 10,
  annotations: { [LAYER_API_VERSION]: "v1", [LAYER_KIND]: kind, [LAYER_NAME]: name, ...extra },
});
const image = (layers: Descriptor[]): ImageManifest => ({
  kind: "image",
  mediaType: "application/vnd.oci.image.manifest.v1+json",
  config: { mediaType: "x", digest: `sha256:${"c".repeat(64)}`, size: 2 },
  layers,
});
const reason = (re: RegExp, want: string) => (e: unknown) =>
  e instanceof ResolutionError && e.reason === want && re.test(e.message);

test("a compliant bundle passes; 20 layers is the limit", () => {
  checkBundle(image(Array.from({ length: 20 }, (_, i) => layer("task", `t${i}`))), "r/b:v1");
  assert.throws(
    () => checkBundle(image(Array.from({ length: 21 }, (_, i) => layer("task", `t${i}`))), "r/b:v1"),
    reason(/21 layers; .* at most 20/, "InvalidBundle"),
  );
});

const broken: [string, Descriptor, RegExp][] = [
  [
    "missing kind",
    { ...layer("task", "a"), annotations: { [LAYER_API_VERSION]: "v1", [LAYER_NAME]: "a" } },
    /no dev.tekton.image.kind/,
  ],
  [
    "missing name",
    { ...layer("task", "a"), annotations: { [LAYER_API_VERSION]: "v1", [LAYER_KIND]: "task" } },
    /no dev.tekton.image.name/,
  ],
  [
    "missing apiVersion",
    { ...layer("task", "a"), annotations: { [LAYER_KIND]: "task", [LAYER_NAME]: "a" } },
    /no dev.tekton.image.apiVersion/,
  ],
  ["no annotations", { ...layer("task", "a"), annotations: {} }, /no dev.tekton.image/],
  ["upper-case kind", layer("Task", "a"), /"Task"; it must be lower-case and singular/],
  ["plural kind", layer("tasks", "a"), /"tasks"; it must be lower-case/],
];
for (const [name, bad, want] of broken) {
  test(`checkBundle rejects ${name}, naming the layer`, () => {
    assert.throws(
      () => checkBundle(image([layer("task", "ok"), bad]), "r/b:v1"),
      reason(new RegExp(`layer 1 .*${want.source}`), "InvalidBundle"),
    );
  });
}

test("findLayer: kind case-insensitive, name exact; NotFound lists the contents", () => {
  const m = image([layer("task", "build"), layer("pipeline", "ci")]);
  assert.equal(findLayer(m, "Pipeline", "ci", "b").annotations?.[LAYER_KIND], "pipeline");
  assert.throws(
    () => findLayer(m, "task", "Build", "r/b:v1"),
    reason(/no task named "Build" in r\/b:v1; it holds task\/build, pipeline\/ci/, "NotFound"),
  );
});

test("resultAnnotations are Tekton's keys", () => {
  assert.deepEqual(resultAnnotations(layer("task", "build")), {
    "resolution.tekton.dev/dev.tekton.image.kind": "task",
    "resolution.tekton.dev/dev.tekton.image.name": "build",
    "resolution.tekton.dev/dev.tekton.image.apiVersion": "v1",
  });
});
