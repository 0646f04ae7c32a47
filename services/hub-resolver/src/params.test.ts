import assert from "node:assert/strict";
import { test } from "node:test";
import { ResolutionError } from "@quarry/resolver-sdk";
import { parseHubConfig } from "./config.ts";
import { hubVersion, parseRequest } from "./params.ts";

const defaults = parseHubConfig({});
const refused = (params: Record<string, string>, message: RegExp, config = defaults) =>
  assert.throws(
    () => parseRequest(params, config),
    (e: unknown) => e instanceof ResolutionError && e.reason === "InvalidParams" && message.test(e.message),
  );

test("Tekton's defaults: type artifact, kind task, catalog per type and kind", () => {
  const r = parseRequest({ name: "git-clone", version: "0.6" }, defaults);
  assert.deepEqual(
    [r.type, r.kind, r.catalog, r.url],
    ["artifact", "task", "tekton-catalog-tasks", undefined],
  );
  assert.equal(
    parseRequest({ name: "b", version: "1", kind: "pipeline" }, defaults).catalog,
    "tekton-catalog-pipelines",
  );
  assert.equal(parseRequest({ name: "b", version: "1", type: "tekton" }, defaults).catalog, "Tekton");
  assert.equal(parseRequest({ name: "b", version: "1", catalog: "mine" }, defaults).catalog, "mine");
  const config = parseHubConfig({
    "default-type": "tekton",
    "default-kind": "pipeline",
    "default-tekton-hub-catalog": "Ours",
  });
  const r2 = parseRequest({ name: "b", version: "1" }, config);
  assert.deepEqual([r2.type, r2.kind, r2.catalog], ["tekton", "pipeline", "Ours"]);
});

test("Tekton's refusals: type, kind, missing name/version, stepaction without a catalog", () => {
  refused({ name: "a", version: "1", type: "helm" }, /^param "type" must be artifact or tekton/);
  refused(
    { name: "a", version: "1", kind: "Task" },
    /^param "kind" must be one of: task, pipeline, stepaction/,
  );
  refused({}, /^missing required hub resolver params: name, version$/);
  refused({ name: "a" }, /^missing required hub resolver params: version$/);
  refused(
    { name: "a", version: "1", kind: "stepaction" },
    /^param "catalog" is required for kind stepaction/,
  );
  assert.equal(
    parseRequest({ name: "a", version: "1", kind: "stepaction", type: "tekton" }, defaults).catalog,
    "Tekton",
  );
});

test("version: an exact version or a go-version constraint; anything else InvalidParams", () => {
  assert.equal(parseRequest({ name: "a", version: ">= 0.5, < 1.0" }, defaults).constraint.length, 2);
  assert.equal(parseRequest({ name: "a", version: "~> 0.6" }, defaults).constraint[0]?.op, "~>");
  refused(
    { name: "a", version: "latest" },
    /^param "version": malformed constraint: latest; expected a version/,
  );
  refused({ name: "a", version: "^1.0" }, /^param "version": malformed constraint/);
});

test("url: absolute http(s), trailing / dropped; credentials, queries and other schemes refused", () => {
  assert.equal(
    parseRequest({ name: "a", version: "1", url: "https://hub.example/api/" }, defaults).url,
    "https://hub.example/api",
  );
  assert.equal(parseRequest({ name: "a", version: "1", url: "" }, defaults).url, undefined);
  refused(
    { name: "a", version: "1", url: "ftp://hub.example" },
    /^param "url": "ftp:\/\/hub\.example" is not an http or https URL$/,
  );
  refused(
    { name: "a", version: "1", url: "hub.example" },
    /^param "url": "hub\.example" is not an absolute URL$/,
  );
  refused(
    { name: "a", version: "1", url: "https://u:p@hub.example" },
    /^param "url": must not carry credentials/,
  );
  refused({ name: "a", version: "1", url: "https://hub.example?x=1" }, /must not have a query or fragment/);
});

test("the hub's spelling of a version: Artifact Hub x.y.z, Tekton Hub x.y", () => {
  assert.equal(hubVersion("0.6", "artifact"), "0.6.0");
  assert.equal(hubVersion("0.6.1", "artifact"), "0.6.1");
  assert.equal(hubVersion("0.6.1", "tekton"), "0.6");
  assert.equal(hubVersion("0.6", "tekton"), "0.6");
});
