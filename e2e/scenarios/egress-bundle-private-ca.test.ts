// A registry serving TLS with a certificate from a private CA: unknown to the
// bundle resolver, a request fails at once with SourceUnavailable naming the
// host and no retries; with the CA in bundleresolver-config's ca-bundle the
// same bundle (pushed by the real `tkn bundle push`) resolves.
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { ResolutionRequest } from "@quarry/api";
import { hostAddress, makePrivateCa } from "@quarry/devcluster/private-ca";
import { tknBundlePush } from "@quarry/devcluster/registry";
import { reasonOf, resolveBundle, TASK_YAML, useBundleScenario } from "@quarry/harness/bundle-scenario";
import { resolvedOk, setConfig, succeeded } from "@quarry/harness/scenario";

const address = hostAddress();
const ca = makePrivateCa({ ips: [address] });
const bundles = useBundleScenario("egress-bundle-ca", {
  registry: { address, tls: { certFile: ca.certFile, keyFile: ca.keyFile, caPem: ca.caPem } },
  setup: async ({ registry }) => {
    await tknBundlePush(registry.ref("team/task:v1"), [TASK_YAML]);
    registry.clearLog();
  },
});

test("an unknown CA: SourceUnavailable naming the host, not retried", async (t) => {
  const { scn, registry, resolver } = bundles();
  const started = Date.now();
  const rr = await resolveBundle(scn, "unknown-ca", { bundle: registry.ref("team/task:v1"), name: "build" });
  t.diagnostic(succeeded(rr)?.message ?? "");
  assert.equal(succeeded(rr)?.status, "False", JSON.stringify(rr.status));
  assert.equal(reasonOf(rr), "SourceUnavailable");
  assert.match(
    succeeded(rr)?.message ?? "",
    new RegExp(
      `^param "bundle": TLS: the certificate of ${registry.host.replace(/\./g, "\\.")} .* add its CA to the resolver's ca-bundle$`,
    ),
  );
  assert.ok(Date.now() - started < 10_000, "a TLS failure must not wait for retries");
  assert.ok(!resolver.logs().includes("will retry"), "a TLS failure is not retried");
  assert.deepEqual(registry.accessLog(), [], "nothing was asked over an untrusted connection");
});

test("the CA in ca-bundle: the bundle resolves over TLS", async () => {
  const { scn, registry } = bundles();
  await setConfig(scn, "bundleresolver-config", { "ca-bundle": ca.caPem });
  // the resolver reads its ConfigMap through an informer: new requests until the bundle applies
  const deadline = Date.now() + 15_000;
  let rr: ResolutionRequest;
  for (let i = 0; ; i++) {
    rr = await resolveBundle(scn, `trusted-${i}`, { bundle: registry.ref("team/task:v1"), name: "build" });
    if (resolvedOk(rr)) break;
    assert.equal(reasonOf(rr), "SourceUnavailable", JSON.stringify(rr.status));
    assert.ok(Date.now() < deadline, "the ca-bundle never applied");
    await sleep(300);
  }
  assert.ok(
    registry.accessLog().some((e) => e.method === "GET" && e.status === 200 && e.path.includes("/blobs/")),
  );
});
