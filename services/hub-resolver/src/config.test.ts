import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError } from "@quarry/kube";
import { configKeyWarnings } from "@quarry/resolver-sdk";
import { configuredHubUrls, hubConfigKeys, hubEnv, parseHubConfig } from "./config.ts";
import { paramsSchema } from "./params.ts";

test("keys left out mean Tekton's shipped values", () => {
  const c = parseHubConfig({});
  assert.equal(c.tektonHubCatalog, "Tekton");
  assert.equal(c.artifactTaskCatalog, "tekton-catalog-tasks");
  assert.equal(c.artifactPipelineCatalog, "tekton-catalog-pipelines");
  assert.equal(c.kind, "task");
  assert.equal(c.type, "artifact");
  assert.equal(c.allowedUrls, undefined);
});

test("hub URLs: the ConfigMap's ordered list, else the env (ARTIFACT_HUB_API defaults to artifacthub.io)", () => {
  const env = hubEnv({ TEKTON_HUB_API: "https://api.hub.tekton.dev/" });
  assert.deepEqual(env, {
    artifactHubApi: "https://artifacthub.io",
    tektonHubApi: "https://api.hub.tekton.dev",
  });
  assert.deepEqual(configuredHubUrls("artifact", parseHubConfig({}), env), ["https://artifacthub.io"]);
  assert.deepEqual(configuredHubUrls("tekton", parseHubConfig({}), hubEnv({})), []);
  const c = parseHubConfig({
    "artifact-hub-urls": "- https://internal.example/\n- https://artifacthub.io/\n",
  });
  assert.deepEqual(configuredHubUrls("artifact", c, env), [
    "https://internal.example",
    "https://artifacthub.io",
  ]);
  assert.deepEqual(
    configuredHubUrls("tekton", parseHubConfig({ "tekton-hub-urls": "- http://th.example" }), hubEnv({})),
    ["http://th.example"],
  );
});

test("allowed-hub-urls: unset = any, [] = none, else the listed prefixes", () => {
  assert.deepEqual(parseHubConfig({ "allowed-hub-urls": "[]" }).allowedUrls, []);
  assert.deepEqual(parseHubConfig({ "allowed-hub-urls": "- https://hubs.example/" }).allowedUrls, [
    "https://hubs.example",
  ]);
});

test("a bad value fails the load with a ConfigError naming the key", () => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ "default-type": "helm" }, /^default-type: must be one of artifact, tekton/],
    [{ "default-kind": "Task" }, /^default-kind: must be one of task, pipeline, stepaction/],
    [{ "artifact-hub-urls": "https://one.example" }, /^artifact-hub-urls: must be a YAML list/],
    [{ "tekton-hub-urls": "- ftp://x.example" }, /^tekton-hub-urls: entry 0: .* is not an http or https URL/],
    [{ "allowed-hub-urls": "- [" }, /^allowed-hub-urls: not YAML/],
    [{ "blocked-networks": "nonsense" }, /^blocked-networks: /],
  ];
  for (const [data, message] of cases)
    assert.throws(
      () => parseHubConfig(data),
      (e: unknown) => e instanceof ConfigError && message.test(e.message),
      JSON.stringify(data),
    );
});

test("params schema: Tekton's six params; a catalog or name that is no single path segment is refused", () => {
  assert.deepEqual(Object.keys(paramsSchema.properties ?? {}).sort(), [
    "catalog",
    "kind",
    "name",
    "type",
    "url",
    "version",
  ]);
  const pattern = new RegExp(
    (paramsSchema.properties as Record<string, { pattern: string }>).name?.pattern ?? "",
  );
  for (const bad of ["..", ".", "a/b", ""]) assert.ok(!pattern.test(bad), bad);
  for (const good of ["git-clone", "Tekton", "tekton-catalog-tasks", "a.b_c"])
    assert.ok(pattern.test(good), good);
});

test("every key is declared: Tekton's shipped hubresolver-config passes, a typo is reported", () => {
  const tektonShipped = {
    "default-tekton-hub-catalog": "Tekton",
    "default-artifact-hub-task-catalog": "tekton-catalog-tasks",
    "default-artifact-hub-pipeline-catalog": "tekton-catalog-pipelines",
    "default-kind": "task",
    "default-type": "artifact",
    "artifact-hub-urls": "- https://artifacthub.io/",
    "tekton-hub-urls": "- https://api.hub.tekton.dev/",
  };
  const quarry = {
    "allowed-hub-urls": "",
    "ca-bundle": "",
    proxy: "",
    "no-proxy": "",
    "blocked-networks": "",
  };
  assert.deepEqual(configKeyWarnings({ ...tektonShipped, ...quarry }, "hub", hubConfigKeys), []);
  assert.deepEqual(
    configKeyWarnings({ "default-catalog": "Tekton" }, "hub", hubConfigKeys).map((w) => [w.key, w.reason]),
    [["default-catalog", "UnknownConfigKey"]],
  );
});
