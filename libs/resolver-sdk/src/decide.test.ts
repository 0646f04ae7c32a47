import assert from "node:assert/strict";
import { test } from "node:test";
import type { ResolutionRequest } from "@quarry/api";
import { defaultRuntimeConfig } from "./config.ts";
import { decideResolution, failureStatus, successStatus } from "./decide.ts";
import { ParamsValidator } from "./params.ts";
import type { JobResolver, Resolver } from "./resolver.ts";

const resolver: Resolver = {
  type: "demo",
  paramsSchema: {
    type: "object",
    required: ["name"],
    properties: { name: { type: "string" }, rev: { type: "string" } },
  },
  isImmutable: (p) => typeof p.rev === "string" && /^[0-9a-f]{40}$/.test(p.rev),
  timeout: (p) => (p.name === "slow" ? 99_000 : 5_000),
  resolve: async () => ({ data: new Uint8Array() }),
};
const validator = new ParamsValidator(resolver.paramsSchema);
const config = { runtime: defaultRuntimeConfig, raw: {} };

function rr(
  params: { name: string; value: string }[],
  status?: ResolutionRequest["status"],
): ResolutionRequest {
  return {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: { name: "r", namespace: "ns" },
    spec: { params },
    status,
  };
}

test("decideResolution: table", () => {
  const sha = "a".repeat(40);
  const cases: {
    name: string;
    obj: ResolutionRequest;
    kind: string;
    useCache?: boolean;
    timeoutMs?: number;
    message?: RegExp;
  }[] = [
    {
      name: "done is skipped",
      obj: rr([{ name: "name", value: "t" }], { conditions: [{ type: "Succeeded", status: "False" }] }),
      kind: "skip",
    },
    { name: "resolved is skipped", obj: rr([{ name: "name", value: "t" }], { data: "eA==" }), kind: "skip" },
    { name: "missing param fails", obj: rr([]), kind: "fail", message: /param "name" is required/ },
    {
      name: "bad cache mode fails",
      obj: rr([
        { name: "name", value: "t" },
        { name: "cache", value: "maybe" },
      ]),
      kind: "fail",
      message: /cache/,
    },
    {
      name: "mutable ref: no cache in auto",
      obj: rr([{ name: "name", value: "t" }]),
      kind: "resolve",
      useCache: false,
      timeoutMs: 5000,
    },
    {
      name: "immutable ref: cache in auto",
      obj: rr([
        { name: "name", value: "t" },
        { name: "rev", value: sha },
      ]),
      kind: "resolve",
      useCache: true,
    },
    {
      name: "cache=always",
      obj: rr([
        { name: "name", value: "t" },
        { name: "cache", value: "always" },
      ]),
      kind: "resolve",
      useCache: true,
    },
    {
      name: "cache=never beats immutable",
      obj: rr([
        { name: "name", value: "t" },
        { name: "rev", value: sha },
        { name: "cache", value: "never" },
      ]),
      kind: "resolve",
      useCache: false,
    },
    {
      name: "resolver timeout hook",
      obj: rr([{ name: "name", value: "slow" }]),
      kind: "resolve",
      timeoutMs: 99_000,
    },
  ];
  for (const c of cases) {
    const p = decideResolution(c.obj, resolver, validator, config);
    assert.equal(p.kind, c.kind, c.name);
    if (p.kind === "fail" && c.message) assert.match(p.message, c.message, c.name);
    if (p.kind === "resolve") {
      if (c.useCache !== undefined) assert.equal(p.useCache, c.useCache, c.name);
      if (c.timeoutMs !== undefined) assert.equal(p.timeoutMs, c.timeoutMs, c.name);
      assert.equal("cache" in p.params, false, `${c.name}: cache param is the runtime's`);
    }
  }
});

test("decideResolution: a perRequest resolver's results are never cached nor shared", () => {
  const own: JobResolver = { ...resolver, watches: [], perRequest: true };
  const withUid = (uid: string, cache?: string) => {
    const obj = rr([{ name: "name", value: "t" }, ...(cache ? [{ name: "cache", value: cache }] : [])]);
    obj.metadata.uid = uid;
    return obj;
  };
  const a = decideResolution(withUid("uid-a", "always"), own, validator, config);
  const b = decideResolution(withUid("uid-b", "always"), own, validator, config);
  const shared = decideResolution(withUid("uid-a", "always"), resolver, validator, config);
  assert.ok(a.kind === "resolve" && b.kind === "resolve" && shared.kind === "resolve");
  assert.equal(a.useCache, false, "cache=always is ignored");
  assert.notEqual(a.cacheKey, b.cacheKey, "identical requests get their own flight");
  assert.equal(a.cacheKey, `${shared.cacheKey}#uid-a`);
});

test("successStatus: base64 data, default content type, refSource mirrored, cache markers", () => {
  const s = successStatus(
    { data: new TextEncoder().encode("kind: Task"), refSource: { uri: "git+x", digest: { sha1: "ab" } } },
    { type: "git", operation: "retrieve", storedAt: "t" },
  );
  assert.equal(s.data, Buffer.from("kind: Task").toString("base64"));
  assert.deepEqual(s.source, s.refSource);
  const ann = s.annotations as Record<string, string>;
  assert.equal(ann["resolution.tekton.dev/content-type"], "application/x-yaml");
  assert.equal(ann["resolution.tekton.dev/cached"], "true");
  assert.equal(ann["resolution.tekton.dev/cache-operation"], "retrieve");
});

test("failureStatus keeps Tekton's reason and puts Quarry's in an annotation", () => {
  const s = failureStatus("NotFound", "no such file", new Date("2026-01-01T00:00:00.123Z"));
  const [c] = s.conditions as { reason: string; status: string; lastTransitionTime: string }[];
  assert.equal(c?.reason, "ResolutionFailed");
  assert.equal(c?.status, "False");
  assert.equal(c?.lastTransitionTime, "2026-01-01T00:00:00Z");
  assert.deepEqual(s.annotations, { "quarry.dev/reason": "NotFound" });
});
