import assert from "node:assert/strict";
import { test } from "node:test";
import { webhookSettingsFromEnv } from "./config.ts";

test("webhook settings: off by default; on derives the Service's DNS names and injects into the RR CRD", () => {
  assert.equal(webhookSettingsFromEnv({}, "ns"), undefined);
  assert.equal(webhookSettingsFromEnv({ QUARRY_CONVERSION_WEBHOOK: "off" }, "ns"), undefined);
  assert.deepEqual(webhookSettingsFromEnv({ QUARRY_CONVERSION_WEBHOOK: "on" }, "ns"), {
    port: 9443,
    host: "0.0.0.0",
    certs: "self-issued",
    secretName: "quarry-lifecycle-controller-webhook-tls",
    certDir: "/var/run/quarry/webhook-tls",
    hosts: [
      "quarry-lifecycle-controller-webhook",
      "quarry-lifecycle-controller-webhook.ns",
      "quarry-lifecycle-controller-webhook.ns.svc",
      "quarry-lifecycle-controller-webhook.ns.svc.cluster.local",
    ],
    crdName: "resolutionrequests.resolution.tekton.dev",
    resyncMs: 60_000,
  });
});

test("webhook settings: explicit hosts, files (cert-manager) inject nothing, an empty CRD name neither", () => {
  const s = webhookSettingsFromEnv(
    {
      QUARRY_CONVERSION_WEBHOOK: "on",
      QUARRY_CONVERSION_WEBHOOK_HOSTS: "127.0.0.1, a.b.svc",
      QUARRY_CONVERSION_WEBHOOK_PORT: "0",
      QUARRY_CONVERSION_WEBHOOK_RESYNC: "5s",
    },
    "ns",
  );
  assert.deepEqual([s?.hosts, s?.port, s?.resyncMs], [["127.0.0.1", "a.b.svc"], 0, 5000]);
  assert.equal(
    webhookSettingsFromEnv(
      { QUARRY_CONVERSION_WEBHOOK: "on", QUARRY_CONVERSION_WEBHOOK_CERTS: "files" },
      "ns",
    )?.crdName,
    undefined,
  );
  assert.equal(
    webhookSettingsFromEnv({ QUARRY_CONVERSION_WEBHOOK: "on", QUARRY_CONVERSION_WEBHOOK_CRD: "" }, "ns")
      ?.crdName,
    undefined,
  );
});

test("webhook settings: bad values stop the start, naming the variable", () => {
  for (const [key, value] of [
    ["QUARRY_CONVERSION_WEBHOOK", "yes"],
    ["QUARRY_CONVERSION_WEBHOOK_PORT", "99999"],
    ["QUARRY_CONVERSION_WEBHOOK_CERTS", "vault"],
    ["QUARRY_CONVERSION_WEBHOOK_RESYNC", "soon"],
  ] as const) {
    assert.throws(
      () => webhookSettingsFromEnv({ QUARRY_CONVERSION_WEBHOOK: "on", [key]: value }, "ns"),
      new RegExp(key),
    );
  }
});
