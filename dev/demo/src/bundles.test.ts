import assert from "node:assert/strict";
import { test } from "node:test";
import type { AccessEntry } from "@quarry/devcluster/registry";
import { registryTraffic } from "./bundles.ts";

const digest = `sha256:${"ab".repeat(32)}`;
const entry = (method: string, path: string, status = 200): AccessEntry => ({
  method,
  path,
  query: "",
  status,
  bytes: 0,
  userAgent: "quarry-bundle-resolver/0.1",
});

test("names each request by method, manifests or blobs, and a shortened digest", () => {
  assert.equal(
    registryTraffic([
      entry("HEAD", "/v2/catalog/ci/manifests/v1"),
      entry("GET", `/v2/catalog/ci/manifests/${digest}`),
      entry("GET", `/v2/catalog/ci/blobs/${digest}`),
    ]),
    "3 HTTP requests: HEAD manifests/v1, GET manifests/sha256:abababa…, GET blobs/sha256:abababa…",
  );
});

test("one request, a failed one with its status, and none", () => {
  assert.equal(
    registryTraffic([entry("HEAD", "/v2/catalog/ci/manifests/v1")]),
    "1 HTTP request: HEAD manifests/v1",
  );
  assert.equal(
    registryTraffic([entry("GET", "/v2/", 401), entry("HEAD", "/v2/team/x/manifests/v2", 404)]),
    "2 HTTP requests: GET /v2/ (401), HEAD manifests/v2 (404)",
  );
  assert.equal(registryTraffic([]), "no requests");
});
