import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createSecureServer } from "node:http2";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
// the control plane's own test PKI (openssl CLI): a CA, a serving cert for 127.0.0.1, client certs
import { issueClientCert, makePki } from "@quarry/devcluster/pki";
import { sendHttp } from "./http-transport.ts";
import { loadConnection } from "./kubeconfig.ts";

const dir = mkdtempSync(join(tmpdir(), "kubeconfig-test-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function kubeconfig(name: string, cluster: object, user: object, namespace?: string): string {
  const file = join(dir, name);
  const config = {
    apiVersion: "v1",
    kind: "Config",
    "current-context": "ctx",
    contexts: [
      { name: "other", context: { cluster: "nope", user: "nope" } },
      { name: "ctx", context: { cluster: "c", user: "u", ...(namespace ? { namespace } : {}) } },
    ],
    clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:6443", ...cluster } }],
    users: [{ name: "u", user }],
  };
  writeFileSync(file, JSON.stringify(config));
  return file;
}

describe("loadConnection: what is read without the library", () => {
  test("a token, the context's namespace and the server", async () => {
    const c = loadConnection(kubeconfig("token", {}, { token: "abc" }, "team-a"), {});
    assert.ok(c);
    assert.equal(c.server, "https://127.0.0.1:6443");
    assert.equal(c.namespace, "team-a");
    assert.deepEqual((await c.authenticate()).headers, { Authorization: "Bearer abc" });
  });

  test("a token file relative to the kubeconfig is re-read on every authentication (rotation)", async () => {
    writeFileSync(join(dir, "tok"), "first\n");
    const c = loadConnection(kubeconfig("tokenfile", {}, { tokenFile: "tok" }), {});
    assert.ok(c);
    assert.equal((await c.authenticate()).headers.Authorization, "Bearer first");
    writeFileSync(join(dir, "tok"), "second\n");
    assert.equal((await c.authenticate()).headers.Authorization, "Bearer second");
  });

  test("username and password become basic auth", async () => {
    const c = loadConnection(kubeconfig("basic", {}, { username: "u", password: "p" }), {});
    assert.equal((await c?.authenticate())?.headers.Authorization, `Basic ${btoa("u:p")}`);
  });

  for (const [what, cluster, user] of [
    ["an exec plugin", {}, { exec: { command: "aws" } }],
    ["an auth provider", {}, { "auth-provider": { name: "oidc" } }],
    ["a proxy-url", { "proxy-url": "http://proxy:3128" }, { token: "t" }],
  ] as const) {
    test(`${what} is left to @kubernetes/client-node`, () => {
      assert.equal(loadConnection(kubeconfig(what.replace(/ /g, "-"), cluster, user), {}), undefined);
    });
  }

  test("KUBECONFIG naming several files is left to the library (it merges them)", () => {
    assert.equal(loadConnection(undefined, { KUBECONFIG: "/a:/b" }), undefined);
  });

  test("KUBECONFIG naming one file is read", () => {
    const file = kubeconfig("env", {}, { token: "t" });
    assert.equal(loadConnection(undefined, { KUBECONFIG: file })?.source, `${file} (context ctx)`);
  });

  test("in a cluster: the service account's token, CA and namespace; an IPv6 host is bracketed", async () => {
    const sa = join(dir, "sa");
    mkdirSync(sa);
    const pki = makePki(mkdtempSync(join(dir, "pki-")));
    writeFileSync(join(sa, "token"), "sa-token\n");
    writeFileSync(join(sa, "ca.crt"), readFileSync(pki.caCert));
    writeFileSync(join(sa, "namespace"), "quarry-system");
    const env = { HOME: dir, KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" };
    const c = loadConnection(undefined, env, sa);
    assert.ok(c);
    assert.equal(c.server, "https://[fd00::1]:443");
    assert.equal(c.namespace, "quarry-system");
    assert.equal((await c.authenticate()).headers.Authorization, "Bearer sa-token");
  });

  test("nothing at all is left to the library (its localhost default)", () => {
    assert.equal(loadConnection(undefined, { HOME: dir }, join(dir, "no-sa")), undefined);
  });
});

describe("loadConnection: TLS against a server that requires a client certificate", () => {
  const pkiDir = mkdtempSync(join(dir, "tls-"));
  const pki = makePki(pkiDir);
  const client = issueClientCert(pki, pkiDir, "client", "alice");
  const server = createServer(
    {
      cert: readFileSync(pki.servingCert),
      key: readFileSync(pki.servingKey),
      ca: readFileSync(pki.caCert),
      requestCert: true,
      rejectUnauthorized: true,
    },
    (req, res) => {
      const peer = (req.socket as import("node:tls").TLSSocket).getPeerCertificate();
      res.end(JSON.stringify({ cn: peer.subject?.CN }));
    },
  );
  after(() => server.close());
  const listening = new Promise<string>((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve(`https://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );

  async function askWho(cluster: object, user: object, name: string): Promise<unknown> {
    const c = loadConnection(kubeconfig(name, { ...cluster, server: await listening }, user), {});
    assert.ok(c);
    const { headers, agent } = await c.authenticate();
    const res = await sendHttp(new URL(c.server), { method: "GET", headers, agent });
    return JSON.parse(await res.text());
  }

  test("certificate and key as files (relative paths) and the CA as a file", async () => {
    const who = await askWho(
      { "certificate-authority": pki.caCert },
      { "client-certificate": "tls-cert.pem", "client-key": "tls-key.pem" },
      "tls-files",
    );
    assert.deepEqual(who, { cn: "alice" });
  });

  test("certificate, key and CA inline (base64 data)", async () => {
    const b64 = (f: string) => readFileSync(f).toString("base64");
    const who = await askWho(
      { "certificate-authority-data": b64(pki.caCert) },
      { "client-certificate-data": b64(client.cert), "client-key-data": b64(client.key) },
      "tls-data",
    );
    assert.deepEqual(who, { cn: "alice" });
  });

  test("a server whose CA is not the configured one is refused", async () => {
    const other = makePki(mkdtempSync(join(dir, "other-")));
    await assert.rejects(
      askWho({ "certificate-authority": other.caCert }, { token: "t" }, "tls-wrong-ca"),
      /unable to get local issuer certificate|self.signed/,
    );
  });

  test("HTTP/1.1 even to a server offering HTTP/2: one dead connection cannot hold every watch", async () => {
    const h2 = createSecureServer(
      { cert: readFileSync(pki.servingCert), key: readFileSync(pki.servingKey), allowHTTP1: true },
      (req, res) => res.end(JSON.stringify({ version: req.httpVersion })),
    );
    const url = await new Promise<string>((resolve) =>
      h2.listen(0, "127.0.0.1", () => resolve(`https://127.0.0.1:${(h2.address() as AddressInfo).port}`)),
    );
    try {
      const c = loadConnection(
        kubeconfig("tls-h2", { "certificate-authority": pki.caCert, server: url }, { token: "t" }),
        {},
      );
      assert.ok(c);
      const { headers, agent } = await c.authenticate();
      const res = await sendHttp(new URL(c.server), { method: "GET", headers, agent });
      assert.deepEqual(JSON.parse(await res.text()), { version: "1.1" });
    } finally {
      h2.close();
    }
  });

  // relative client-certificate paths resolve against the kubeconfig's folder
  writeFileSync(join(dir, "tls-cert.pem"), readFileSync(client.cert));
  writeFileSync(join(dir, "tls-key.pem"), readFileSync(client.key));
});
