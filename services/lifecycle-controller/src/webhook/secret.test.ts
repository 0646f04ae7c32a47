import assert from "node:assert/strict";
import { test } from "node:test";
import { secrets } from "@quarry/kube";
import { FakeKubeClient } from "@quarry/kube/testing";
import { createLogger } from "@quarry/observability";
import { renewCertificates } from "./certs.ts";
import { signedBy, splitPem } from "./pki.ts";
import { customResourceDefinitions, fromSecretData, SecretCertKeeper, toSecretData } from "./secret.ts";

const log = createLogger({ service: "test", level: "silent" });
const DAY = 24 * 3600 * 1000;
const NS = "quarry-system";
const SECRET = "quarry-lifecycle-controller-webhook-tls";
const CRD = "resolutionrequests.resolution.tekton.dev";
const HOSTS = ["quarry-lifecycle-controller-webhook.quarry-system.svc"];
const t0 = new Date("2030-01-01T00:00:00Z");

function cluster(strategy: "Webhook" | "None" = "Webhook") {
  const client = new FakeKubeClient();
  client.seed(secrets, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: SECRET, namespace: NS },
    type: "Opaque",
  });
  client.seed(customResourceDefinitions, {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: CRD },
    spec:
      strategy === "Webhook"
        ? {
            conversion: {
              strategy,
              webhook: { conversionReviewVersions: ["v1"], clientConfig: { url: "https://x/convert" } },
            },
          }
        : { conversion: { strategy } },
  });
  let now = t0;
  const keeper = new SecretCertKeeper({
    client,
    namespace: NS,
    secretName: SECRET,
    crdName: CRD,
    hosts: HOSTS,
    log,
    now: () => now,
  });
  const secretCerts = () =>
    fromSecretData(
      client.object<{ metadata: object; data?: Record<string, string> }>(secrets, NS, SECRET)?.data,
    );
  const injected = () => {
    const crd = client.object<{
      metadata: object;
      spec: { conversion: { webhook?: { clientConfig: { caBundle?: string } } } };
    }>(customResourceDefinitions, undefined, CRD);
    return splitPem(
      Buffer.from(crd?.spec.conversion.webhook?.clientConfig.caBundle ?? "", "base64").toString(),
    );
  };
  return {
    client,
    keeper,
    secretCerts,
    injected,
    setNow: (days: number) => (now = new Date(t0.getTime() + days * DAY)),
  };
}

test("first sync: issues into the empty Secret and injects the CA into the CRD; the next one changes nothing", async () => {
  const { client, keeper, secretCerts, injected } = cluster();
  const serving = await keeper.sync();
  const stored = secretCerts();
  assert.ok(stored);
  assert.equal(serving.certPem, stored.serving.certPem);
  assert.deepEqual(injected(), [stored.ca.certPem]);
  client.clearActions();
  await keeper.sync();
  assert.deepEqual(client.writes(), []);
});

test("with an injected clock: the serving cert renewed at day 61 under the same CA, the CA rotated at day 244 with both CAs trusted", async () => {
  const { keeper, secretCerts, injected, setNow } = cluster();
  const first = await keeper.sync();
  const ca1 = secretCerts()!.ca.certPem;
  setNow(61);
  const second = await keeper.sync();
  assert.notEqual(second.certPem, first.certPem);
  assert.ok(signedBy(second.certPem, ca1));
  assert.deepEqual(injected(), [ca1]);
  setNow(244);
  const third = await keeper.sync();
  const ca2 = secretCerts()!.ca.certPem;
  assert.notEqual(ca2, ca1);
  assert.ok(signedBy(third.certPem, ca2));
  assert.deepEqual(injected(), [ca2, ca1]);
  assert.deepEqual(splitPem(secretCerts()!.caBundle), [ca2, ca1]);
  setNow(366); // the old CA expired: it leaves the bundle at the next renewal
  await keeper.sync();
  assert.deepEqual(injected(), [ca2]);
});

test("another replica renewed first (409): its certificates are served, and its CA injected", async () => {
  const { client, keeper, secretCerts, injected } = cluster();
  const winner = await renewCertificates(undefined, { action: "issue", reason: "t" }, HOSTS, t0);
  let raced = false;
  client.react((call) => {
    if (call.verb === "update" && call.resource === "secrets" && !raced) {
      raced = true;
      client.seed(secrets, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: SECRET, namespace: NS },
        type: "Opaque",
        data: toSecretData(winner),
      });
    }
    return undefined;
  });
  const serving = await keeper.sync();
  assert.ok(raced);
  assert.equal(serving.certPem, winner.serving.certPem);
  assert.equal(secretCerts()?.serving.certPem, winner.serving.certPem);
  assert.deepEqual(injected(), [winner.ca.certPem]);
});

test("a CRD that does not convert by webhook is left alone; a missing Secret is an error naming it", async () => {
  const { client, keeper } = cluster("None");
  await keeper.sync();
  assert.deepEqual(
    client.writes().map((w) => w.resource),
    ["secrets"],
  );
  const empty = new FakeKubeClient();
  const lost = new SecretCertKeeper({
    client: empty,
    namespace: NS,
    secretName: SECRET,
    crdName: CRD,
    hosts: HOSTS,
    log,
  });
  await assert.rejects(
    () => lost.sync(),
    /Secret quarry-system\/quarry-lifecycle-controller-webhook-tls is missing/,
  );
});
