// The resolver's decisions with the registry and the API server replaced by
// in-memory stand-ins: when credentials are read, how failures map to
// reasons. The real registry and RBAC are in e2e/scenarios/bundle-*.test.ts.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import { gzipSync } from "node:zlib";
import type { ResolutionRequest } from "@quarry/api";
import {
  type BasicCredential,
  type Descriptor,
  DockerCredentials,
  type FetchedManifest,
  type OciRegistry,
  RegistryError,
  type RegistryErrorCode,
} from "@quarry/oci";
import { ParamsValidator, ResolutionError, type ResolveContext } from "@quarry/resolver-sdk";
import { decideResolution, parseResolverConfig } from "@quarry/resolver-sdk/internal";
import { defaultBundleConfig } from "./config.ts";
import type { CredentialRequest } from "./credentials.ts";
import { type BundleRequest, parseRequest } from "./params.ts";
import { BundleResolver, toResolutionError } from "./resolver.ts";

const TASK = '{"apiVersion":"tekton.dev/v1","kind":"Task","metadata":{"name":"build"}}';
const sha = (b: Uint8Array) => `sha256:${createHash("sha256").update(b).digest("hex")}`;
const LAYER_BYTES = gzipSync(Buffer.from(TASK)); // a raw (non-tar) layer: Tekton reads those too
const LAYER: Descriptor = {
  mediaType: "application/vnd.oci.image.layer.v1.tar+gzip",
  digest: sha(LAYER_BYTES),
  size: LAYER_BYTES.length,
  annotations: {
    "dev.tekton.image.apiVersion": "v1",
    "dev.tekton.image.kind": "task",
    "dev.tekton.image.name": "build",
  },
};
const MANIFEST_DIGEST = `sha256:${"d".repeat(64)}`;

/** A registry that wants `needs` (or nothing) and records what it was sent. */
function fakeRegistry(needs?: BasicCredential) {
  const calls: (BasicCredential | undefined)[] = [];
  const gate = (credential: BasicCredential | undefined) => {
    calls.push(credential);
    if (needs && credential?.password !== needs.password) throw new RegistryError("unauthorized", "401");
  };
  const registry: OciRegistry = {
    resolve: async (_repo, _ref, opts) => {
      gate(opts?.credential);
      return { mediaType: "x", digest: MANIFEST_DIGEST, size: 1 };
    },
    getManifest: async (_repo, _ref, opts): Promise<FetchedManifest> => {
      gate(opts?.credential);
      const manifest = { kind: "image" as const, mediaType: "x", config: LAYER, layers: [LAYER] };
      return {
        descriptor: { mediaType: "x", digest: MANIFEST_DIGEST, size: 1 },
        manifest,
        bytes: new Uint8Array(1),
      };
    },
    getBlob: async (_repo, _d, opts) => {
      gate(opts?.credential);
      return LAYER_BYTES;
    },
  };
  return { registry, calls };
}

function loader(creds?: BasicCredential) {
  const asked: CredentialRequest[] = [];
  const load = async (req: CredentialRequest) => {
    asked.push(req);
    const credentials = new DockerCredentials();
    if (creds) credentials.add(JSON.stringify({ auths: { "127.0.0.1:5000": creds } }), "Secret ns/pull");
    return { credentials, sources: creds ? ["Secret ns/pull"] : [] };
  };
  return { load, asked };
}

const ctx = (): ResolveContext =>
  ({
    signal: new AbortController().signal,
    namespace: "ns",
    name: "r",
    config: {},
  }) as unknown as ResolveContext;
const USER = { username: "u", password: "p" };

test("a public bundle is fetched anonymously and reads no credentials", async () => {
  const { registry } = fakeRegistry();
  const { load, asked } = loader(USER);
  const r = new BundleResolver({ registry, loadCredentials: load });
  const out = await r.resolve({ bundle: "127.0.0.1:5000/team/b:v1", name: "build" }, ctx());
  assert.equal(Buffer.from(out.data).toString(), TASK);
  assert.equal(asked.length, 0);
  assert.deepEqual(out.refSource, {
    uri: "127.0.0.1:5000/team/b",
    digest: { sha256: "d".repeat(64) },
    entryPoint: "build",
  });
});

test("a 401 without named credentials reads the default ServiceAccount's and retries with them", async () => {
  const { registry, calls } = fakeRegistry(USER);
  const { load, asked } = loader(USER);
  const r = new BundleResolver({ registry, loadCredentials: load });
  await r.resolve({ bundle: "127.0.0.1:5000/team/b:v1", name: "build" }, ctx());
  assert.equal(asked.length, 1);
  assert.equal(asked[0]?.defaultServiceAccount, "default");
  assert.equal(calls[0], undefined, "first try anonymous");
  assert.deepEqual(calls.at(-1), { username: "u", password: "p" });
});

test("a named secret is read up front, without the default ServiceAccount", async () => {
  const { registry, calls } = fakeRegistry(USER);
  const { load, asked } = loader(USER);
  const r = new BundleResolver({ registry, loadCredentials: load });
  await r.resolve({ bundle: "127.0.0.1:5000/team/b:v1", name: "build", secret: "pull" }, ctx());
  assert.equal(asked.length, 1);
  assert.equal(asked[0]?.defaultServiceAccount, undefined);
  assert.ok(calls.every((c) => c?.password === "p"));
});

const req: BundleRequest = parseRequest({ bundle: "r.io/a:v1", name: "x" }, defaultBundleConfig);
const mapping: [RegistryErrorCode, string | undefined][] = [
  ["unauthorized", "Forbidden"],
  ["denied", "Forbidden"],
  ["insecure", "Forbidden"],
  ["not-found", "NotFound"],
  ["digest-mismatch", "DigestMismatch"],
  ["too-large", "TooLarge"],
  ["invalid-manifest", "InvalidBundle"],
  ["unavailable", undefined],
];
for (const [code, reason] of mapping) {
  test(`registry ${code} → ${reason ?? "transient (retried)"}`, () => {
    const err = toResolutionError(new RegistryError(code, "m", { retryAfterMs: 5 }), req, false, []);
    if (reason === undefined) {
      assert.ok(!(err instanceof ResolutionError));
      assert.equal((err as RegistryError).retryAfterMs, 5, "Retry-After reaches the runtime");
    } else {
      assert.ok(
        err instanceof ResolutionError && err.reason === reason && err.message.startsWith('param "bundle"'),
      );
    }
  });
}

test("a registry at a link-local (cloud metadata) address is Forbidden before any fetch", async () => {
  const { registry, calls } = fakeRegistry();
  const { load, asked } = loader(USER);
  const r = new BundleResolver({ registry, loadCredentials: load });
  for (const bundle of ["169.254.169.254/latest/b:v1", "[fe80::1]:5000/team/b:v1"])
    await assert.rejects(
      () => r.resolve({ bundle, name: "build" }, ctx()),
      (err: unknown) =>
        err instanceof ResolutionError &&
        err.reason === "Forbidden" &&
        /^param "bundle": registry .* is a link-local address/.test(err.message),
      bundle,
    );
  assert.equal(calls.length, 0);
  assert.equal(asked.length, 0);
});

/** The runtime's decision for a request named `name` with `params` under the ConfigMap `data`. */
function decide(data: Record<string, string>, params: Record<string, string>, name = "rr") {
  const resolver = new BundleResolver({ registry: fakeRegistry().registry, loadCredentials: loader().load });
  const rr: ResolutionRequest = {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: { name, namespace: "ns" },
    spec: { params: Object.entries(params).map(([name, value]) => ({ name, value })) },
  };
  const validator = new ParamsValidator(resolver.paramsSchema, resolver.compiledParams);
  const decision = decideResolution(rr, resolver, validator, parseResolverConfig(data, resolver));
  assert.equal(decision.kind, "resolve", JSON.stringify(decision));
  return decision as Extract<typeof decision, { kind: "resolve" }>;
}

test("default-cache-mode: without a cache param, always caches a tag, auto only a digest, never nothing", () => {
  const tag = { bundle: "127.0.0.1:5000/team/b:v1", name: "build" };
  const digest = { ...tag, bundle: `127.0.0.1:5000/team/b@sha256:${"d".repeat(64)}` };
  const rows: [string, Record<string, string>, Record<string, string>, boolean][] = [
    ["always, a tag", { "default-cache-mode": "always" }, tag, true],
    ["auto, a tag", { "default-cache-mode": "auto" }, tag, false],
    ["unset (auto), a tag", {}, tag, false],
    ["never, a tag", { "default-cache-mode": "never" }, tag, false],
    ["auto, a digest", { "default-cache-mode": "auto" }, digest, true],
    ["never, a digest", { "default-cache-mode": "never" }, digest, false],
    [
      "never, but the request's cache param says always",
      { "default-cache-mode": "never" },
      { ...tag, cache: "always" },
      true,
    ],
  ];
  for (const [what, data, params, want] of rows) assert.equal(decide(data, params).useCache, want, what);
  // the identical second request looks up the first one's entry
  const always = { "default-cache-mode": "always" };
  assert.equal(decide(always, tag, "a").cacheKey, decide(always, tag, "b").cacheKey);
});
