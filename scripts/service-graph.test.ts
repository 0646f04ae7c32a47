import assert from "node:assert/strict";
import { test } from "node:test";
import { type ServiceGraph, serviceGraph, servicesWithMain } from "./service-graph.ts";

// Each service's start graph, loaded once (a process per service) for every test below.
const graphs = new Map<string, ServiceGraph>(servicesWithMain().map((s) => [s, serviceGraph(s)]));

test("every service's imports load", () => {
  assert.ok(graphs.size >= 9, `${graphs.size} services`);
  for (const [service, { urls }] of graphs)
    assert.ok(urls.length > 100, `${service}: ${urls.length} modules: the imports did not load`);
});

test("no service loads ajv at start: its validators are generated code", () => {
  for (const [service, { urls }] of graphs)
    assert.deepEqual(
      urls.filter((u) => /\/node_modules\/ajv\//.test(u)),
      [],
      `${service} loads ajv`,
    );
});

// An ESM import of node:http evaluates its WebSocket getters, which load Node's bundled undici
// (~13 MiB of RSS); services take node:http through @quarry/kube's nodeHttp instead.
test("no service loads Node's bundled undici at start", () => {
  for (const [service, { builtins }] of graphs) {
    assert.ok(builtins.includes("NativeModule http"), `${service}: node:http is not loaded at all`);
    assert.deepEqual(
      builtins.filter((b) => b.includes("deps/undici")),
      [],
      `${service} loads Node's undici at start`,
    );
  }
});
