import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError } from "@quarry/kube";
import { defaultRuntimeConfig, type LoadedConfig, parseResolverConfig } from "./config.ts";
import { parseTektonCacheConfig, withTektonCache } from "./tekton-cache-config.ts";

describe("parseTektonCacheConfig", () => {
  it("reads max-size and ttl as Tekton ships them; unset keys stay unset", () => {
    assert.deepEqual(parseTektonCacheConfig({ "max-size": "1000", ttl: "5m" }), {
      maxSize: 1000,
      ttlMs: 300_000,
    });
    assert.deepEqual(parseTektonCacheConfig({ ttl: "1h30m" }), { maxSize: undefined, ttlMs: 5_400_000 });
    assert.deepEqual(parseTektonCacheConfig({ "max-size": " " }), { maxSize: undefined, ttlMs: undefined });
  });

  const bad: [string, string][] = [
    ["max-size", "0"],
    ["max-size", "-5"],
    ["max-size", "1e3"],
    ["max-size", "lots"],
    ["ttl", "0s"],
    ["ttl", "300"],
    ["ttl", "-5m"],
  ];
  for (const [key, value] of bad) {
    it(`${key}: "${value}" is a ConfigError naming the key`, () => {
      assert.throws(
        () => parseTektonCacheConfig({ [key]: value }),
        (e: unknown) => e instanceof ConfigError && e.key === key,
      );
    });
  }
});

describe("withTektonCache: the resolver's own keys first, then resolver-cache-config, then the defaults", () => {
  const load = (data: Record<string, string>): LoadedConfig => parseResolverConfig(data, {});
  const rows: {
    name: string;
    own: Record<string, string>;
    tekton: Record<string, string>;
    want: [number, number];
  }[] = [
    {
      name: "nothing set: Tekton's defaults, which are Quarry's",
      own: {},
      tekton: {},
      want: [1000, 300_000],
    },
    { name: "only Tekton's", own: {}, tekton: { "max-size": "50", ttl: "1m" }, want: [50, 60_000] },
    {
      name: "the resolver's own keys win",
      own: { "cache-size": "10", "cache-ttl": "10s" },
      tekton: { "max-size": "50", ttl: "1m" },
      want: [10, 10_000],
    },
    {
      name: "each key on its own",
      own: { "cache-ttl": "10s" },
      tekton: { "max-size": "50", ttl: "1m" },
      want: [50, 10_000],
    },
  ];
  for (const r of rows) {
    it(r.name, () => {
      const got = withTektonCache(load(r.own), parseTektonCacheConfig(r.tekton)).runtime;
      assert.deepEqual([got.cacheSize, got.cacheTtlMs], r.want);
    });
  }

  it("returns the same object when nothing changes (the resolver's parsed config stays keyed by it)", () => {
    const loaded = load({});
    assert.equal(withTektonCache(loaded, { maxSize: undefined, ttlMs: undefined }), loaded);
    assert.equal(
      withTektonCache(loaded, { maxSize: defaultRuntimeConfig.cacheSize, ttlMs: undefined }),
      loaded,
    );
    assert.equal(withTektonCache(loaded, { maxSize: 7, ttlMs: undefined }).raw, loaded.raw);
  });
});
