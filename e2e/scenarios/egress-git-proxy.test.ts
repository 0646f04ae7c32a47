// The git resolver behind a real forward proxy (tinyproxy) reaching a TLS git
// server with a private CA: both engines tunnel through the proxy with
// CONNECT, so the proxy's log holds host:port and never the gitToken; a host
// in no-proxy (a CIDR here) goes direct; and a token is never sent to a
// plain-http URL through the proxy, even to a host listed in insecure-hosts.
// The token Secret is bound to the private repository's https URL.
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { ResolutionRequest } from "@quarry/api";
import { useForwardProxy } from "@quarry/devcluster/forward-proxy";
import { TASK_V1, TASK_V2 } from "@quarry/devcluster/git-repos";
import { hostAddress, makePrivateCa } from "@quarry/devcluster/private-ca";
import { addPrivateRepo, GIT_LABELS, useGitScenario } from "@quarry/harness/git-scenario";
import {
  createRequest,
  dataOf,
  finished,
  newRequest,
  resolvedOk,
  setConfig,
  succeeded,
  waitForRequest,
} from "@quarry/harness/scenario";

const TOKEN = "e2e-proxy-git-t0ken";
const address = hostAddress();
const ca = makePrivateCa({ ips: [address] });
const forwardProxy = useForwardProxy();

const git = useGitScenario("egress-git-proxy", {
  server: { address, tls: { cert: ca.certPem, key: ca.keyPem } },
  setup: async ({ scn, server }) => {
    await addPrivateRepo(scn, server, "team/private.git", TOKEN);
    await setConfig(scn, "git-resolver-config", { "ca-bundle": ca.caPem, proxy: forwardProxy().url });
  },
});

async function request(name: string, params: Record<string, string>): Promise<ResolutionRequest> {
  const { scn } = git();
  await createRequest(
    scn.admin,
    newRequest(scn.namespace, name, GIT_LABELS, { pathInRepo: "task.yaml", ...params }),
  );
  return waitForRequest(scn, name, finished);
}

test("through the proxy: public and private repositories resolve; the proxy sees CONNECT host:port only", async () => {
  const proxy = forwardProxy();
  const { server, url } = git();
  const host = new URL(server.baseUrl).host;
  const pub = await request("via-proxy-public", { url, revision: "main" });
  assert.ok(resolvedOk(pub), JSON.stringify(pub.status));
  assert.equal(dataOf(pub), TASK_V2);
  const priv = await request("via-proxy-private", {
    url: server.url("team/private.git"),
    revision: "main",
    gitToken: "git-creds",
  });
  assert.ok(resolvedOk(priv), JSON.stringify(priv.status));
  assert.equal(dataOf(priv), TASK_V1);
  assert.equal(
    server.log.filter((e) => e.repo === "team/private.git" && e.status === 200).at(-1)?.user,
    "git",
  );

  const seen = proxy.requests();
  assert.ok(seen.length >= 2, `the proxy passed ${seen.length} requests`);
  assert.deepEqual(new Set(seen.map((r) => `${r.method} ${r.target}`)), new Set([`CONNECT ${host}`]));
  const log = proxy.rawLog();
  assert.ok(!log.includes(TOKEN), "the token reached the proxy's log");
  assert.ok(
    !log.includes(Buffer.from(`git:${TOKEN}`).toString("base64")),
    "basic credentials reached the proxy's log",
  );
});

test("no-proxy (a CIDR): the host goes direct", async () => {
  const proxy = forwardProxy();
  const { scn, url } = git();
  await setConfig(scn, "git-resolver-config", {
    "ca-bundle": ca.caPem,
    proxy: proxy.url,
    "no-proxy": `localhost, ${address}/32`,
  });
  // the ConfigMap reaches the resolver through its informer: requests until one goes direct
  const deadline = Date.now() + 15_000;
  for (let i = 0; ; i++) {
    const before = proxy.requests().length;
    // a new revision each time: a cached result would not show the route
    const rr = await request(`direct-${i}`, { url, revision: i % 2 === 0 ? "feature" : "v1" });
    assert.ok(resolvedOk(rr), JSON.stringify(rr.status));
    if (proxy.requests().length === before) break;
    assert.ok(Date.now() < deadline, "no-proxy never applied");
    await sleep(300);
  }
});

test("a gitToken is never sent to a plain-http URL through the proxy: Forbidden, nothing sent", async () => {
  const proxy = forwardProxy();
  const { scn } = git();
  // insecure-hosts vouches for the network path to the host, not for a proxy that would read the token
  await setConfig(scn, "git-resolver-config", {
    "ca-bundle": ca.caPem,
    proxy: forwardProxy().url,
    "insecure-hosts": "git.internal.example",
  });
  const before = proxy.requests().length;
  const deadline = Date.now() + 15_000;
  const throughProxy =
    /^param "url": refusing to send the gitToken to http:\/\/git\.internal\.example\/team\/private\.git over plain http through proxy http:\/\/127\.0\.0\.1:\d+: use https, or list the host in no-proxy$/;
  for (let i = 0; ; i++) {
    const rr = await request(`in-clear-${i}`, {
      url: "http://git.internal.example/team/private.git",
      revision: "main",
      gitToken: "git-creds",
    });
    const c = succeeded(rr);
    assert.equal(c?.status, "False");
    assert.equal(rr.status?.annotations?.["quarry.dev/reason"], "Forbidden", JSON.stringify(rr.status));
    if (throughProxy.test(c?.message ?? "")) break;
    // until the new config reaches the resolver the host is not in insecure-hosts: refused for that instead
    assert.match(c?.message ?? "", /list the host in insecure-hosts/);
    assert.ok(Date.now() < deadline, JSON.stringify(rr.status));
    await sleep(300);
  }
  assert.ok(!proxy.rawLog().includes("git.internal.example"), "the proxy was asked for the plain-http host");
  assert.equal(
    proxy
      .requests()
      .slice(before)
      .filter((r) => r.method !== "CONNECT").length,
    0,
  );
});
