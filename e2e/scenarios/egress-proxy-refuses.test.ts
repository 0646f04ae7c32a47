// A forward proxy that refuses the resolver (an egress policy saying no):
// the request fails at once with SourceUnavailable naming the proxy, the
// host and the proxy's answer, and is not retried.
import assert from "node:assert/strict";
import { test } from "node:test";
import { useForwardProxy } from "@quarry/devcluster/forward-proxy";
import { hostAddress, makePrivateCa } from "@quarry/devcluster/private-ca";
import { GIT_LABELS, useGitScenario } from "@quarry/harness/git-scenario";
import {
  createRequest,
  finished,
  newRequest,
  setConfig,
  succeeded,
  waitForRequest,
} from "@quarry/harness/scenario";

const address = hostAddress();
const ca = makePrivateCa({ ips: [address] });
const forwardProxy = useForwardProxy({ refuse: true });

const git = useGitScenario("egress-proxy-refuses", {
  server: { address, tls: { cert: ca.certPem, key: ca.keyPem } },
  setup: async ({ scn }) => {
    await setConfig(scn, "git-resolver-config", { "ca-bundle": ca.caPem, proxy: forwardProxy().url });
  },
});

test("the proxy refuses: SourceUnavailable naming proxy, host and answer; not retried", async (t) => {
  const proxy = forwardProxy();
  const { scn, url, server, resolver } = git();
  const started = Date.now();
  await createRequest(
    scn.admin,
    newRequest(scn.namespace, "refused", GIT_LABELS, { url, revision: "main", pathInRepo: "task.yaml" }),
  );
  const rr = await waitForRequest(scn, "refused", finished);
  const c = succeeded(rr);
  t.diagnostic(c?.message ?? "");
  assert.equal(c?.status, "False", JSON.stringify(rr.status));
  assert.equal(rr.status?.annotations?.["quarry.dev/reason"], "SourceUnavailable");
  assert.equal(
    c?.message,
    `param "url": proxy ${proxy.url} refused to connect to ${new URL(server.baseUrl).host} (HTTP 403)`,
  );
  assert.ok(Date.now() - started < 10_000, "a refusal must not wait for retries");
  assert.ok(!resolver.logs().includes("will retry"), "a refusal is not retried");
  assert.ok(proxy.rawLog().includes(`Unauthorized connection from "127.0.0.1"`));
  assert.equal(server.log.length, 0);
});
