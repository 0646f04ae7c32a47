import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createSecureServer } from "node:http2";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
// the control plane's own test PKI (openssl CLI): a CA and a serving cert for 127.0.0.1
import { makePki } from "@quarry/devcluster/pki";
import { writeKubeconfig } from "../testing/kubeconfig-fixture.ts";
import { sendHttp } from "./http-transport.ts";
import { headersOf, libraryConnection, TlsAgents } from "./library-connection.ts";

const dir = mkdtempSync(join(tmpdir(), "library-connection-test-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("an exec plugin's kubeconfig: the plugin's token, over HTTP/1.1 even to a server offering HTTP/2", async () => {
  const pki = makePki(mkdtempSync(join(dir, "pki-")));
  const h2 = createSecureServer(
    { cert: readFileSync(pki.servingCert), key: readFileSync(pki.servingKey), allowHTTP1: true },
    (req, res) =>
      res.end(JSON.stringify({ version: req.httpVersion, authorization: req.headers.authorization })),
  );
  const server = await new Promise<string>((resolve) =>
    h2.listen(0, "127.0.0.1", () => resolve(`https://127.0.0.1:${(h2.address() as AddressInfo).port}`)),
  );
  try {
    const credential = JSON.stringify({
      apiVersion: "client.authentication.k8s.io/v1",
      kind: "ExecCredential",
      status: { token: "from-plugin" },
    });
    const exec = {
      apiVersion: "client.authentication.k8s.io/v1",
      command: "/bin/sh",
      args: ["-c", `echo '${credential}'`],
      interactiveMode: "Never",
    };
    const file = writeKubeconfig(
      join(dir, "exec.kubeconfig"),
      { server, "certificate-authority": pki.caCert },
      { exec },
      "team-a",
    );
    const c = libraryConnection(file);
    assert.equal(c.readByLibrary, true);
    assert.equal(c.namespace, "team-a");
    const first = await c.authenticate();
    assert.equal(first.dispatcher, undefined);
    const res = await sendHttp(new URL(c.server), {
      method: "GET",
      headers: first.headers,
      agent: first.agent,
    });
    assert.deepEqual(JSON.parse(await res.text()), { version: "1.1", authorization: "Bearer from-plugin" });
    // re-authentication keeps the Agent (and its connections) while the TLS material is the same
    const second = await c.authenticate();
    assert.equal(second.agent, first.agent);
    first.agent.destroy();
  } finally {
    h2.close();
  }
});

test("TlsAgents: the same material keeps its Agent, a rotated certificate gets a new one", () => {
  const one = makePki(mkdtempSync(join(dir, "rot-1-")));
  const two = makePki(mkdtempSync(join(dir, "rot-2-")));
  const ca = readFileSync(one.caCert);
  const first = { ca, cert: readFileSync(one.servingCert), key: readFileSync(one.servingKey) };
  const agents = new TlsAgents("https://127.0.0.1:6443");
  const a = agents.for(first).agent;
  assert.equal(agents.for({ ...first, cert: Buffer.from(first.cert) }).agent, a);
  const rotated = { ca, cert: readFileSync(two.servingCert), key: readFileSync(two.servingKey) };
  const b = agents.for(rotated);
  assert.notEqual(b.agent, a);
  assert.deepEqual(b.tls.cert, rotated.cert);
  assert.notEqual(agents.for({ ca, rejectUnauthorized: false }).agent, b.agent);
});

test("headersOf: the library's headers as strings; username and password as Basic unless a header authorizes", () => {
  assert.deepEqual(headersOf({ headers: { Authorization: "Bearer t", "X-Multi": ["a", "b"], "X-N": 3 } }), {
    Authorization: "Bearer t",
    "X-Multi": "a, b",
    "X-N": "3",
  });
  assert.deepEqual(headersOf({ auth: "alice:secret" }), {
    Authorization: `Basic ${Buffer.from("alice:secret").toString("base64")}`,
  });
  assert.deepEqual(headersOf({ auth: "alice:secret", headers: { authorization: "Bearer t" } }), {
    authorization: "Bearer t",
  });
});
