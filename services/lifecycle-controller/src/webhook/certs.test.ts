import assert from "node:assert/strict";
import { test } from "node:test";
import {
  bundle,
  DEFAULT_ROTATION,
  decideCertificates,
  renewCertificates,
  type WebhookCerts,
} from "./certs.ts";
import { certFacts, issueCa, signedBy, splitPem } from "./pki.ts";

const DAY = 24 * 3600 * 1000;
const HOSTS = ["svc.ns.svc", "127.0.0.1"];
const t0 = new Date("2030-01-01T00:00:00Z");
const at = (days: number) => new Date(t0.getTime() + days * DAY);

async function issued(now = t0, hosts = HOSTS): Promise<WebhookCerts> {
  return renewCertificates(undefined, { action: "issue", reason: "test" }, hosts, now);
}

test("issued certificates: a CA for a year, a serving certificate for 90 days naming every host, signed by the CA", async () => {
  const c = await issued();
  const ca = certFacts(c.ca.certPem);
  const leaf = certFacts(c.serving.certPem);
  assert.ok(ca?.isCa);
  assert.equal(leaf?.isCa, false);
  assert.equal(Math.round((ca!.notAfter.getTime() - t0.getTime()) / DAY), 365);
  assert.equal(Math.round((leaf!.notAfter.getTime() - t0.getTime()) / DAY), 90);
  assert.deepEqual(leaf?.hosts, HOSTS);
  assert.ok(signedBy(c.serving.certPem, c.ca.certPem));
  assert.deepEqual(splitPem(c.caBundle), [c.ca.certPem]);
});

test("decideCertificates over a year of an injected clock", async () => {
  const c = await issued();
  const other = await issued();
  const cases: [string, WebhookCerts | undefined, Date, string, string[]?][] = [
    ["nothing yet", undefined, t0, "issue"],
    ["fresh", c, t0, "keep"],
    ["serving cert at half its life", c, at(45), "keep"],
    ["serving cert past 2/3 of its life (60 days)", c, at(61), "renew-serving"],
    ["CA past 2/3 of its life (~243 days)", c, at(244), "rotate-ca"],
    ["CA expired", c, at(366), "issue"],
    ["a host the serving cert does not name", c, t0, "renew-serving", [...HOSTS, "new.ns.svc"]],
    ["serving cert of another CA", { ...c, serving: other.serving }, t0, "renew-serving"],
    ["CA key not the CA's", { ...c, ca: { ...c.ca, keyPem: other.ca.keyPem } }, t0, "issue"],
    [
      "serving key not the serving cert's",
      { ...c, serving: { ...c.serving, keyPem: other.serving.keyPem } },
      t0,
      "renew-serving",
    ],
    ["garbage", { ...c, ca: { certPem: "x", keyPem: "y" } }, t0, "issue"],
  ];
  for (const [name, certs, now, want, hosts] of cases) {
    assert.equal(decideCertificates(certs, hosts ?? HOSTS, now).action, want, name);
  }
});

test("renewing the serving certificate keeps the CA and the bundle", async () => {
  const c = await issued();
  const decision = decideCertificates(c, HOSTS, at(61));
  const next = await renewCertificates(c, decision, HOSTS, at(61));
  assert.equal(next.ca.certPem, c.ca.certPem);
  assert.notEqual(next.serving.certPem, c.serving.certPem);
  assert.ok(signedBy(next.serving.certPem, c.ca.certPem));
  assert.equal(next.caBundle, c.caBundle);
  assert.equal(decideCertificates(next, HOSTS, at(61)).action, "keep");
});

test("rotating the CA: old and new CA both in the bundle until the old one expires; the serving cert never outlives its CA", async () => {
  const c = await issued();
  const rotated = await renewCertificates(c, decideCertificates(c, HOSTS, at(244)), HOSTS, at(244));
  assert.notEqual(rotated.ca.certPem, c.ca.certPem);
  assert.ok(signedBy(rotated.serving.certPem, rotated.ca.certPem));
  assert.deepEqual(splitPem(rotated.caBundle), [rotated.ca.certPem, c.ca.certPem]);
  // the next renewals drop the old CA once it expired
  const later = await renewCertificates(rotated, decideCertificates(rotated, HOSTS, at(366)), HOSTS, at(366));
  assert.deepEqual(splitPem(later.caBundle), [rotated.ca.certPem]);
  // a serving certificate issued close to its CA's end ends with it
  const shortCa = await renewCertificates(undefined, { action: "issue", reason: "t" }, HOSTS, t0, {
    ...DEFAULT_ROTATION,
    caLifetimeMs: 30 * DAY,
    renewAt: 0.99,
  });
  assert.ok(certFacts(shortCa.serving.certPem)!.notAfter <= certFacts(shortCa.ca.certPem)!.notAfter);
});

test("bundle drops expired and repeated certificates", async () => {
  const a = await issueCa("a", { notBefore: t0, notAfter: at(10) });
  const b = await issueCa("b", { notBefore: t0, notAfter: at(100) });
  assert.deepEqual(splitPem(bundle([b.certPem, a.certPem, b.certPem], at(1))), [b.certPem, a.certPem]);
  assert.deepEqual(splitPem(bundle([b.certPem, a.certPem], at(11))), [b.certPem]);
});
