// The http resolver over HTTPS from a server whose certificate a private CA
// signed: trusted once http-resolver-config's ca-bundle holds the CA, and
// refused (terminal, naming the host) by a resolver that does not trust it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { makePrivateCa } from "@quarry/devcluster/private-ca";
import { httpOutcome, useHttpScenario } from "@quarry/harness/http-scenario";
import { task } from "@quarry/harness/http-server";
import { dataOf, resolvedOk, setConfig, succeeded } from "@quarry/harness/scenario";

const ca = makePrivateCa({ ips: ["127.0.0.1"], caName: "quarry-http-e2e-ca" });
const world = useHttpScenario("http-tls", {
  server: { tls: { cert: ca.certPem, key: ca.keyPem } },
  config: () => ({ "ca-bundle": ca.caPem }),
  setup: async ({ web }) => web.route("/task.yaml", (_q, res) => res.end(task("over-tls"))),
});

test("HTTPS under a private CA resolves with ca-bundle; without it the certificate is refused", async () => {
  const { scn, web } = world();
  const url = `${web.base}/task.yaml`;
  assert.match(url, /^https:\/\/127\.0\.0\.1:/);
  const ok = await httpOutcome(scn, "trusted", { url });
  assert.ok(resolvedOk(ok), JSON.stringify(succeeded(ok)));
  assert.match(dataOf(ok), /name: over-tls/);

  // the live config drops the CA: the next request's TLS handshake fails
  await setConfig(scn, "http-resolver-config", {});
  await new Promise((r) => setTimeout(r, 1500));
  const refused = await httpOutcome(scn, "untrusted", { url, cache: "never" });
  assert.equal(succeeded(refused)?.status, "False");
  assert.equal(refused.status?.annotations?.["quarry.dev/reason"], "SourceUnavailable");
  assert.match(succeeded(refused)?.message ?? "", /^param "url": .*127\.0\.0\.1/);
});
