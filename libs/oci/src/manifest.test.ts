import assert from "node:assert/strict";
import { test } from "node:test";
import { ManifestError, MediaType, parseManifest } from "./manifest.ts";

const D = (c: string) => `sha256:${c.repeat(64)}`;
const bytes = (doc: unknown) => Buffer.from(JSON.stringify(doc));

test("Docker v2 schema 2 manifest as tkn writes it", () => {
  const m = parseManifest(
    bytes({
      schemaVersion: 2,
      mediaType: MediaType.DockerManifest,
      config: { mediaType: "application/vnd.docker.container.image.v1+json", digest: D("c"), size: 10 },
      layers: [
        {
          mediaType: "application/vnd.docker.image.rootfs.diff.tar.gzip",
          digest: D("a"),
          size: 99,
          annotations: { "dev.tekton.image.kind": "task" },
        },
      ],
    }),
  );
  assert.equal(m.kind, "image");
  assert.equal(m.kind === "image" && m.layers[0]?.annotations?.["dev.tekton.image.kind"], "task");
});

test("OCI index, media type from the Content-Type header when the document omits it", () => {
  const m = parseManifest(
    bytes({
      schemaVersion: 2,
      manifests: [
        {
          mediaType: MediaType.OciManifest,
          digest: D("b"),
          size: 5,
          platform: { os: "linux", architecture: "amd64" },
        },
      ],
    }),
    `${MediaType.OciIndex}; charset=utf-8`,
  );
  assert.equal(m.kind, "index");
  assert.deepEqual(m.kind === "index" && m.manifests[0]?.platform, { os: "linux", architecture: "amd64" });
});

const bad: [string, unknown, RegExp][] = [
  ["not JSON", "{", /not valid JSON/],
  ["schema 1", { schemaVersion: 1 }, /schemaVersion/],
  [
    "no layers",
    {
      schemaVersion: 2,
      mediaType: MediaType.OciManifest,
      config: { mediaType: "x", digest: D("c"), size: 1 },
    },
    /no layers/,
  ],
  [
    "bad digest",
    {
      schemaVersion: 2,
      mediaType: MediaType.OciManifest,
      config: { mediaType: "x", digest: "sha256:zz", size: 1 },
      layers: [],
    },
    /config digest/,
  ],
  [
    "negative size",
    {
      schemaVersion: 2,
      mediaType: MediaType.OciManifest,
      config: { mediaType: "x", digest: D("c"), size: -1 },
      layers: [],
    },
    /size/,
  ],
  [
    "foreign media type",
    { schemaVersion: 2, mediaType: "application/vnd.foo", layers: [] },
    /not an image manifest/,
  ],
  [
    "non-string annotation",
    {
      schemaVersion: 2,
      mediaType: MediaType.OciManifest,
      config: { mediaType: "x", digest: D("c"), size: 1 },
      layers: [{ mediaType: "x", digest: D("a"), size: 1, annotations: { k: 1 } }],
    },
    /annotations/,
  ],
];
for (const [name, doc, want] of bad) {
  test(`parseManifest rejects ${name}`, () => {
    const input = typeof doc === "string" ? Buffer.from(doc) : bytes(doc);
    assert.throws(
      () => parseManifest(input),
      (e: unknown) => e instanceof ManifestError && want.test(e.message),
    );
  });
}
