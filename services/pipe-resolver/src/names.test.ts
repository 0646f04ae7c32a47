import assert from "node:assert/strict";
import { test } from "node:test";
import { isDns1123Subdomain, isLabelValue, labelValue, outputObjectName, podName } from "./names.ts";

const HASH16 = /-[0-9a-f]{16}$/;

test("outputObjectName: <owner>-<pipe>-<key> as written when it is a DNS-1123 subdomain, else cleaned and hashed", () => {
  const cases: { owner: string; pipe: string; key: string; want: string | RegExp }[] = [
    { owner: "build-1", pipe: "gencert", key: "tls-key", want: "build-1-gencert-tls-key" },
    { owner: "run.v2", pipe: "gen.cert", key: "k", want: "run.v2-gen.cert-k" },
    { owner: "build-1", pipe: "gencert", key: "123", want: "build-1-gencert-123" },
    // keys may hold upper case and "_", which names may not
    { owner: "build-1", pipe: "gencert", key: "Tls_Cert", want: /^build-1-gencert-tls-cert-[0-9a-f]{16}$/ },
    { owner: "build-1", pipe: "gencert", key: "tls_cert", want: /^build-1-gencert-tls-cert-[0-9a-f]{16}$/ },
    // a key ending in "-" would end the name with it
    { owner: "build-1", pipe: "gencert", key: "k-", want: /^build-1-gencert-k-[0-9a-f]{16}$/ },
    { owner: "build-1", pipe: "gencert", key: "__", want: /^build-1-gencert-[0-9a-f]{16}$/ },
    // dots next to dashes are not DNS-1123
    { owner: "a.", pipe: "b", key: "c", want: /^a.b-c-[0-9a-f]{16}$/ },
    { owner: "", pipe: "", key: "_", want: /^pipe-[0-9a-f]{16}$/ },
    // too long: cut, hashed, at most 253
    {
      owner: "o".repeat(200),
      pipe: "p".repeat(100),
      key: "k",
      want: new RegExp(`^${"o".repeat(200)}-p{35}-[0-9a-f]{16}$`),
    },
  ];
  for (const c of cases) {
    const name = outputObjectName(c.owner, c.pipe, c.key);
    if (typeof c.want === "string") assert.equal(name, c.want);
    else assert.match(name, c.want, JSON.stringify(c));
    assert.ok(isDns1123Subdomain(name), `${name} is a DNS-1123 subdomain`);
    assert.ok(name.length <= 253);
    assert.equal(outputObjectName(c.owner, c.pipe, c.key), name, "stable");
  }
});

test("outputObjectName: keys that clean up alike still get different names", () => {
  const names = ["Tls_Cert", "tls_cert", "TLS-CERT", "tls-cert"].map((k) => outputObjectName("run", "p", k));
  assert.equal(new Set(names).size, names.length, names.join(" "));
  assert.equal(names[3], "run-p-tls-cert");
  assert.ok(names.slice(0, 3).every((n) => HASH16.test(n)));
  // long names that differ only past the cut
  const a = outputObjectName("o".repeat(250), "p", "a");
  const b = outputObjectName("o".repeat(250), "p", "b");
  assert.notEqual(a, b);
});

test("podName: readable, at most 63 characters, a DNS-1123 label, stable per request object", () => {
  const cases = [
    { namespace: "ns", name: "pipe-0123456789abcdef0123456789abcdef", uid: "u1" },
    { namespace: "ns", name: "My_Request", uid: "u1" },
    { namespace: "ns", name: "x".repeat(253), uid: "u1" },
    { namespace: "ns", name: "---", uid: "u1" },
  ];
  for (const r of cases) {
    const name = podName(r);
    assert.ok(name.length <= 63, name);
    assert.match(name, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    assert.match(name, /-[0-9a-f]{10}$/);
    assert.equal(podName({ ...r }), name, "stable");
    assert.notEqual(
      podName({ ...r, uid: "u2" }),
      name,
      "a new request object under the same name gets a new pod",
    );
    assert.notEqual(podName({ ...r, namespace: "other" }), name);
  }
  assert.match(podName(cases[0]!), /^pipe-0123456789abcdef0123456789abcdef-pipe-[0-9a-f]{10}$/);
  assert.match(podName(cases[1]!), /^my-request-pipe-[0-9a-f]{10}$/);
  assert.match(podName(cases[3]!), /^pipe-[0-9a-f]{10}$/);
});

test("labelValue: unchanged when valid, else cut and hashed to a valid label value", () => {
  const cases: [string, string | RegExp][] = [
    ["gencert", "gencert"],
    ["Gen_Cert.v2", "Gen_Cert.v2"],
    ["", ""],
    ["a".repeat(63), "a".repeat(63)],
    ["a".repeat(64), /^a{52}-[0-9a-f]{10}$/],
    [
      "gen.cert.with.a.very.long.name.that.goes.on.and.on.and.on.forever.and.ever",
      /^gen\.cert.*-[0-9a-f]{10}$/,
    ],
    ["-x-", /^x-[0-9a-f]{10}$/],
    ["é", /^[0-9a-f]{10}$/],
  ];
  for (const [input, want] of cases) {
    const v = labelValue(input);
    if (typeof want === "string") assert.equal(v, want);
    else assert.match(v, want, input);
    assert.ok(isLabelValue(v), `${v} is a label value`);
  }
  assert.notEqual(labelValue("a".repeat(64)), labelValue("a".repeat(65)));
});
