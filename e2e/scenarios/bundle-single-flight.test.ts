// Concurrent requests for one bundle make one registry fetch of each thing
// they share: 20 requests at once for the same bundle digest cause exactly
// one GET of the manifest and one GET per layer blob, as the real registry's
// access log shows; by tag, each request looks the tag up (HEAD) but the
// content is still fetched once. Every request has its own params (kind in
// a different letter case, cache: never), so neither the runtime's request
// dedupe nor its result cache can stand in for the resolver's digest cache.
// How many requests joined the fetch in flight (rather than finding it
// cached) depends on scheduling, so it is reported, not asserted.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ResolutionRequest } from "@quarry/api";
import { craneManifest, type Registry, tknBundlePush } from "@quarry/devcluster/registry";
import type { RunningService } from "@quarry/devcluster/service";
import {
  BUNDLE_LABELS,
  PIPELINE_YAML,
  TASK_YAML,
  taskYaml,
  useBundleScenario,
} from "@quarry/harness/bundle-scenario";
import {
  createRequest,
  dataOf,
  finished,
  newRequest,
  resolvedOk,
  type Scenario,
  waitForRequest,
} from "@quarry/harness/scenario";
import yaml from "js-yaml";

const REQUESTS = 20;
const TAGGED_TASK = taskYaml("build", "echo tagged");
// other bytes than the first bundle's pipeline, so no layer is shared between the two repositories
const TAGGED_PIPELINE = `${PIPELINE_YAML}  description: tagged\n`;

interface Pushed {
  manifest: string;
  task: string;
  pipeline: string;
}

const pushed: Record<string, Pushed> = {};
const bundles = useBundleScenario("bundle-sf", {
  setup: async ({ registry }) => {
    for (const [repo, docs] of [
      ["team/shared", [TASK_YAML, PIPELINE_YAML]],
      ["team/tagged", [TAGGED_TASK, TAGGED_PIPELINE]],
    ] as const) {
      const ref = registry.ref(`${repo}:v1`);
      const { digest } = await tknBundlePush(ref, [...docs]);
      const layers = (await craneManifest(ref)).manifest.layers as {
        digest: string;
        annotations: Record<string, string>;
      }[];
      const layerOf = (kind: string) =>
        layers.find((l) => l.annotations["dev.tekton.image.kind"] === kind)!.digest;
      pushed[repo] = { manifest: digest, task: layerOf("task"), pipeline: layerOf("pipeline") };
    }
  },
});

/** The i-th letter-case variant of `word` ("task", "Task", "tAsk", ...): distinct params, same kind. */
const casing = (word: string, i: number) =>
  [...word].map((c, j) => ((i >> j) & 1 ? c.toUpperCase() : c)).join("");

/** Creates REQUESTS requests at once, half for the Task and half for the Pipeline, and waits for all. */
async function burst(scn: Scenario, prefix: string, bundle: string): Promise<ResolutionRequest[]> {
  const names = Array.from({ length: REQUESTS }, (_, i) => `${prefix}-${i}`);
  await Promise.all(
    names.map((name, i) => {
      const half = i % 2 === 0;
      const params = {
        bundle,
        name: half ? "build" : "ci",
        kind: casing(half ? "task" : "pipeline", i >> 1),
        cache: "never",
      };
      return createRequest(scn.admin, newRequest(scn.namespace, name, BUNDLE_LABELS, params));
    }),
  );
  return Promise.all(names.map((name) => waitForRequest(scn, name, finished)));
}

function assertServed(rrs: ResolutionRequest[], task: string, pipeline: string): void {
  rrs.forEach((rr, i) => {
    assert.ok(resolvedOk(rr), `${rr.metadata.name}: ${JSON.stringify(rr.status)}`);
    assert.deepEqual(yaml.load(dataOf(rr)), yaml.load(i % 2 === 0 ? task : pipeline), rr.metadata.name);
  });
}

/** The resolver's digest-cache misses for manifests so far (a miss fetches or joins a fetch in flight). */
async function manifestMisses(resolver: RunningService): Promise<number> {
  const { body } = await resolver.ops("/metrics");
  const line = /^quarry_bundle_cache_lookups_total\{what="manifest",result="miss"\} (\d+)$/m.exec(body);
  assert.ok(line, "the resolver exports its digest cache lookups");
  return Number(line[1]);
}

const gets = (registry: Registry, what: "manifests" | "blobs", repo: string) =>
  registry
    .accessLog()
    .filter((e) => e.method === "GET" && e.path.startsWith(`/v2/${repo}/${what}/`))
    .map((e) => e.path.slice(`/v2/${repo}/${what}/`.length));

test("20 concurrent requests by digest: one manifest GET, one GET per layer blob", async (t) => {
  const { scn, registry, resolver } = bundles();
  const { manifest, task, pipeline } = pushed["team/shared"]!;
  registry.clearLog();
  const missed = await manifestMisses(resolver);
  const rrs = await burst(scn, "by-digest", `${registry.host}/team/shared@${manifest}`);
  assertServed(rrs, TASK_YAML, PIPELINE_YAML);
  t.diagnostic(`${(await manifestMisses(resolver)) - missed} requests missed the manifest cache together`);
  assert.deepEqual(gets(registry, "manifests", "team/shared"), [manifest]);
  assert.deepEqual(gets(registry, "blobs", "team/shared").sort(), [task, pipeline].sort());
  // a digest needs no tag lookup
  assert.deepEqual(
    registry.accessLog().filter((e) => e.method === "HEAD"),
    [],
  );
});

test("20 concurrent requests by tag: a HEAD each, still one manifest GET and one GET per layer blob", async (t) => {
  const { scn, registry, resolver } = bundles();
  const { manifest, task, pipeline } = pushed["team/tagged"]!;
  registry.clearLog();
  const missed = await manifestMisses(resolver);
  const rrs = await burst(scn, "by-tag", registry.ref("team/tagged:v1"));
  assertServed(rrs, TAGGED_TASK, TAGGED_PIPELINE);
  t.diagnostic(`${(await manifestMisses(resolver)) - missed} requests missed the manifest cache together`);
  const heads = registry.accessLog().filter((e) => e.method === "HEAD");
  assert.ok(heads.length >= 1 && heads.length <= REQUESTS, `${heads.length} HEADs`);
  assert.ok(heads.every((e) => e.path === "/v2/team/tagged/manifests/v1"));
  // the tag only ever goes through HEAD; the manifest is fetched by the digest the HEAD answered
  assert.deepEqual(gets(registry, "manifests", "team/tagged"), [manifest]);
  assert.deepEqual(gets(registry, "blobs", "team/tagged").sort(), [task, pipeline].sort());
});
