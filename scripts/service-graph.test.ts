import assert from "node:assert/strict";
import { test } from "node:test";
import { serviceGraph, servicesWithMain } from "./service-graph.ts";

// An ESM import of node:http evaluates its WebSocket getters, which load Node's bundled undici
// (~13 MiB of RSS); services take node:http through @quarry/kube's nodeHttp instead.
test("no service loads Node's bundled undici at start", () => {
  const services = servicesWithMain();
  assert.ok(services.length >= 9, `${services.length} services`);
  for (const service of services) {
    const { urls, builtins } = serviceGraph(service);
    assert.ok(urls.length > 100, `${service}: ${urls.length} modules: the imports did not load`);
    assert.ok(builtins.includes("NativeModule http"), `${service}: node:http is not loaded at all`);
    assert.deepEqual(
      builtins.filter((b) => b.includes("deps/undici")),
      [],
      `${service} loads Node's undici at start`,
    );
  }
});
