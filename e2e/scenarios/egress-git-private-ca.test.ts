// A git server with a certificate from a private CA, as an operator's internal
// forge has: unknown to the resolver, a request fails at once with
// SourceUnavailable naming the host (no retry storm: one failed handshake per
// engine, not one per attempt); with the CA in git-resolver-config's
// ca-bundle, both engines (ref discovery in-process, the git binary's fetch)
// trust it and the same file resolves.
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { ResolutionRequest } from "@quarry/api";
import { TASK_V2 } from "@quarry/devcluster/git-repos";
import { hostAddress, makePrivateCa } from "@quarry/devcluster/private-ca";
import { GIT_LABELS, useGitScenario } from "@quarry/harness/git-scenario";
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

const address = hostAddress();
const ca = makePrivateCa({ ips: [address] });
const git = useGitScenario("egress-git-ca", {
  server: { address, tls: { cert: ca.certPem, key: ca.keyPem } },
});

async function request(name: string, params: Record<string, string>): Promise<ResolutionRequest> {
  const { scn, url } = git();
  await createRequest(
    scn.admin,
    newRequest(scn.namespace, name, GIT_LABELS, { url, pathInRepo: "task.yaml", ...params }),
  );
  return waitForRequest(scn, name, finished);
}

test("an unknown CA: SourceUnavailable naming the host, failed at once", async (t) => {
  const { server, repo, resolver } = git();
  const host = new URL(server.baseUrl).host;
  const started = Date.now();
  // a branch goes through ref discovery (in-process); a commit id straight to the git binary
  for (const [name, revision] of [
    ["unknown-ca-branch", "main"],
    ["unknown-ca-commit", repo.main],
  ] as const) {
    const before = server.tlsFailures;
    const rr = await request(name, { revision });
    const c = succeeded(rr);
    t.diagnostic(`${name}: ${c?.message}`);
    assert.equal(c?.status, "False", JSON.stringify(rr.status));
    assert.equal(rr.status?.annotations?.["quarry.dev/reason"], "SourceUnavailable");
    assert.match(
      c?.message ?? "",
      new RegExp(`param "url": TLS: the certificate of ${host.replace(/\./g, "\\.")} `),
    );
    assert.match(c?.message ?? "", /ca-bundle/);
    // the runtime retries transient errors up to max-attempts (5) with backoff: a TLS failure is not one
    assert.ok(
      server.tlsFailures - before <= 2,
      `${server.tlsFailures - before} failed handshakes for ${name}`,
    );
  }
  assert.ok(Date.now() - started < 15_000, "a TLS failure must not wait for retries");
  assert.equal(server.log.length, 0, "no request reached the server over an untrusted connection");
  assert.ok(!resolver.logs().includes("will retry"), "a TLS failure is not retried");
});

test("the CA in ca-bundle: a branch and a commit resolve over TLS", async () => {
  const { scn, repo, server } = git();
  await setConfig(scn, "git-resolver-config", { "ca-bundle": ca.caPem });
  // the resolver reads its ConfigMap through an informer: new requests until the bundle applies
  const deadline = Date.now() + 15_000;
  let rr: ResolutionRequest;
  for (let i = 0; ; i++) {
    rr = await request(`trusted-branch-${i}`, { revision: "main" });
    if (resolvedOk(rr)) break;
    assert.equal(
      rr.status?.annotations?.["quarry.dev/reason"],
      "SourceUnavailable",
      JSON.stringify(rr.status),
    );
    assert.ok(Date.now() < deadline, "the ca-bundle never applied");
    await sleep(300);
  }
  assert.equal(dataOf(rr), TASK_V2);
  assert.equal(rr.status?.annotations?.["resolution.tekton.dev/revision"], repo.main);
  const byCommit = await request("trusted-commit", { revision: repo.first, pathInRepo: "task.yaml" });
  assert.ok(resolvedOk(byCommit), JSON.stringify(byCommit.status));
  assert.ok(server.fetches().length >= 1, "the git binary fetched over TLS");
});
