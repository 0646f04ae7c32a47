import assert from "node:assert/strict";
import { createServer as createHttpServer } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { hostAddress, makePrivateCa, type PrivateCa } from "@quarry/devcluster/private-ca";
import { ConfigError } from "@quarry/kube";
import {
  bypassesProxy,
  describeEgressFailure,
  type Egress,
  EgressError,
  effectiveEgress,
  egressFetch,
  NO_EGRESS,
  parseEgress,
  proxyFor,
  redactUrl,
  trustedCas,
} from "./egress.ts";

describe("no-proxy matching (curl's rules, plus CIDRs)", () => {
  const cases: [string, number, string | undefined, boolean][] = [
    ["git.example.com", 443, undefined, false],
    ["git.example.com", 443, "*", true],
    ["git.example.com", 443, "example.com", true],
    ["git.example.com", 443, ".example.com", true],
    ["example.com", 443, ".example.com", true],
    ["notexample.com", 443, "example.com", false],
    ["git.example.com", 443, "other.org, git.example.com", true],
    ["git.example.com", 443, "git.example.com:8443", false],
    ["git.example.com", 8443, "git.example.com:8443", true],
    ["10.1.2.3", 443, "10.0.0.0/8", true],
    ["11.1.2.3", 443, "10.0.0.0/8", false],
    ["10.1.2.3", 443, "10.1.2.3", true],
    ["10.1.2.30", 443, "10.1.2.3", false],
    ["[fd00::5]", 443, "fd00::/64", true],
    ["git.example.com", 443, "10.0.0.0/8", false],
    ["GIT.Example.COM", 443, "example.com", true],
  ];
  for (const [host, port, noProxy, want] of cases) {
    test(`${host}:${port} with no-proxy ${JSON.stringify(noProxy)} → ${want ? "direct" : "proxied"}`, () => {
      assert.equal(bypassesProxy(host, port, noProxy), want);
    });
  }
});

test("proxyFor: the configured proxy unless the host bypasses it; none configured means direct", () => {
  const egress: Egress = { caBundle: undefined, proxy: "http://proxy:3128", noProxy: "internal.example" };
  assert.equal(proxyFor("https://github.com/org/repo.git", egress), "http://proxy:3128");
  assert.equal(proxyFor("https://git.internal.example/repo.git", egress), undefined);
  assert.equal(proxyFor("https://github.com/org/repo.git", NO_EGRESS), undefined);
});

test("effectiveEgress: config wins, then the process's proxy variables", () => {
  const env = { HTTPS_PROXY: "http://env-proxy:1", NO_PROXY: "env.example" };
  assert.deepEqual(effectiveEgress({}, env), {
    caBundle: undefined,
    proxy: "http://env-proxy:1",
    noProxy: "env.example",
  });
  assert.deepEqual(effectiveEgress({ proxy: "http://cfg:2", noProxy: "cfg.example" }, env), {
    caBundle: undefined,
    proxy: "http://cfg:2",
    noProxy: "cfg.example",
  });
  assert.equal(effectiveEgress({}, {}).proxy, undefined);
});

test("redactUrl hides a proxy password", () => {
  assert.equal(redactUrl("http://user:s3cret@proxy:3128"), "http://user:***@proxy:3128");
  assert.equal(redactUrl("http://proxy:3128"), "http://proxy:3128");
  assert.equal(redactUrl("http://user:s3cret@proxy:3128/"), "http://user:***@proxy:3128/");
});

describe("parseEgress", () => {
  let ca: PrivateCa;
  before(() => {
    ca = makePrivateCa({ ips: ["127.0.0.1"] });
  });

  test("reads ca-bundle, proxy and no-proxy, under a prefix too", () => {
    const got = parseEgress({ "ca-bundle": ca.caPem, proxy: "http://p:3128", "no-proxy": "a,b" });
    assert.equal(got.proxy, "http://p:3128");
    assert.equal(got.noProxy, "a,b");
    assert.match(got.caBundle ?? "", /^-----BEGIN CERTIFICATE-----/);
    assert.deepEqual(parseEgress({ "team.proxy": "https://p:3129" }, "team."), { proxy: "https://p:3129" });
    assert.deepEqual(parseEgress({ proxy: "" }), { proxy: undefined });
  });

  test("a bundle adds to Node's public roots", () => {
    const cas = trustedCas({ caBundle: ca.caPem });
    assert.equal(cas.length, trustedCas({ caBundle: undefined }).length + 1);
  });

  const bad: [string, Record<string, string>, RegExp][] = [
    ["not PEM", { "ca-bundle": "hello" }, /ca-bundle: must hold PEM certificates/],
    [
      "a broken certificate",
      { "ca-bundle": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----" },
      /ca-bundle: certificate 1 of 1 does not parse/,
    ],
    ["a socks proxy", { proxy: "socks5://p:1080" }, /proxy: must be an http\(s\) URL/],
    ["a proxy password in the error", { proxy: "ftp://u:pw@p" }, /u:\*\*\*@p/],
  ];
  for (const [name, data, re] of bad) {
    test(`refuses ${name} with a ConfigError naming the key`, () => {
      assert.throws(
        () => parseEgress(data),
        (err: unknown) => err instanceof ConfigError && re.test(err.message) && !err.message.includes(":pw@"),
      );
    });
  }
});

test("describeEgressFailure: TLS and proxy refusals are named; other network errors are not", () => {
  const url = new URL("https://git.example:8443/repo.git");
  const tls = new TypeError("fetch failed", {
    cause: Object.assign(new Error("unable to get local issuer certificate"), {
      code: "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
    }),
  });
  assert.deepEqual(describeEgressFailure(tls, url, undefined), {
    code: "tls",
    message:
      "TLS: the certificate of git.example:8443 is signed by an unknown authority (UNABLE_TO_GET_ISSUER_CERT_LOCALLY); add its CA to the resolver's ca-bundle",
  });
  const undiciRefusal = new TypeError("fetch failed", {
    cause: new Error("Request was cancelled.", {
      cause: new Error("Proxy response (403) !== 200 when HTTP Tunneling"),
    }),
  });
  assert.deepEqual(describeEgressFailure(undiciRefusal, url, "http://u:pw@proxy:3128"), {
    code: "proxy-refused",
    message: "proxy http://u:***@proxy:3128 refused to connect to git.example:8443 (HTTP 403)",
  });
  const nodeRefusal = Object.assign(
    new Error(
      "Failed to establish tunnel to git.example:8443 via http://proxy:3128: HTTP/1.0 407 Proxy Authentication Required",
    ),
    { code: "ERR_PROXY_TUNNEL" },
  );
  assert.match(
    describeEgressFailure(nodeRefusal, url, "http://proxy:3128")?.message ?? "",
    /\(HTTP 407\): it wants credentials in the proxy URL$/,
  );
  const refused = new TypeError("fetch failed", {
    cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
  });
  assert.equal(describeEgressFailure(refused, url, undefined), undefined);
});

describe("egressFetch against a real https server with a private CA", () => {
  let ca: PrivateCa;
  let server: Server;
  let url: string;
  const seen: string[] = [];
  before(async () => {
    const address = hostAddress();
    ca = makePrivateCa({ ips: [address] });
    server = createServer({ cert: ca.certPem, key: ca.keyPem }, (req, res) => {
      seen.push(req.headers.authorization ?? "-");
      res.end("ok");
    });
    await new Promise<void>((r) => server.listen(0, address, r));
    url = `https://${address}:${(server.address() as AddressInfo).port}/v2/`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  test("without the CA: an EgressError naming the host, no retry material", async () => {
    const f = egressFetch(() => NO_EGRESS);
    await assert.rejects(
      () => f(url),
      (err: unknown) =>
        err instanceof EgressError && err.code === "tls" && err.message.includes(new URL(url).host),
    );
  });

  test("with the CA in the bundle: served", async () => {
    const f = egressFetch(() => ({ ...NO_EGRESS, caBundle: ca.caPem }));
    const res = await f(url);
    assert.equal(await res.text(), "ok");
  });

  test("credentials never go to a plain-http source through a proxy", async () => {
    let proxied = 0;
    const proxy = createHttpServer((_q, r) => {
      proxied++;
      r.end();
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    try {
      const f = egressFetch(() => ({
        ...NO_EGRESS,
        proxy: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
      }));
      await assert.rejects(
        () => f("http://registry.example:5000/v2/", { headers: { authorization: "Basic c2VjcmV0" } }),
        (err: unknown) =>
          err instanceof EgressError &&
          err.code === "credentials-in-clear" &&
          /over plain http through proxy/.test(err.message),
      );
      assert.equal(proxied, 0);
    } finally {
      await new Promise<void>((r) => proxy.close(() => r()));
    }
  });
});
