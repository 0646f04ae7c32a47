// The bundle resolver behind a real forward proxy (tinyproxy) pulling from a
// private TLS registry (a private CA, Basic auth): registry traffic tunnels
// through the proxy with CONNECT, so the proxy's log holds host:port and
// never the pull credentials.
import assert from "node:assert/strict";
import { test } from "node:test";
import { useForwardProxy } from "@quarry/devcluster/forward-proxy";
import { hostAddress, makePrivateCa } from "@quarry/devcluster/private-ca";
import { tknBundlePush } from "@quarry/devcluster/registry";
import {
  createPullSecret,
  grantCredentialAccess,
  resolveBundle,
  TASK_YAML,
  useBundleScenario,
} from "@quarry/harness/bundle-scenario";
import { resolvedOk, setConfig } from "@quarry/harness/scenario";

const USER = { username: "puller", password: "e2e-proxy-s3cret-pw" };
const address = hostAddress();
const ca = makePrivateCa({ ips: [address] });
const forwardProxy = useForwardProxy();

const bundles = useBundleScenario("egress-bundle-proxy", {
  registry: {
    address,
    auth: "htpasswd",
    users: [USER],
    tls: { certFile: ca.certFile, keyFile: ca.keyFile, caPem: ca.caPem },
  },
  setup: async ({ scn, registry }) => {
    // written before the resolver starts: the proxy applies from its first request
    await setConfig(scn, "bundleresolver-config", { "ca-bundle": ca.caPem, proxy: forwardProxy().url });
    await tknBundlePush(registry.ref("private/task:v1"), [TASK_YAML], USER);
    registry.clearLog();
    await createPullSecret(scn, "pull", registry.host, USER);
    await grantCredentialAccess(scn);
  },
});

test("a private bundle through the proxy: resolved; the proxy saw CONNECT host:port only", async () => {
  const proxy = forwardProxy();
  const { scn, registry } = bundles();
  const rr = await resolveBundle(scn, "via-proxy", {
    bundle: registry.ref("private/task:v1"),
    name: "build",
    secret: "pull",
  });
  assert.ok(resolvedOk(rr), JSON.stringify(rr.status));
  assert.ok(registry.accessLog().some((e) => e.status === 200 && e.path.includes("/blobs/")));
  const seen = proxy.requests();
  assert.ok(seen.length >= 1, "nothing went through the proxy");
  assert.deepEqual(
    new Set(seen.map((r) => `${r.method} ${r.target}`)),
    new Set([`CONNECT ${registry.host}`]),
  );
  const log = proxy.rawLog();
  assert.ok(!log.includes(USER.password), "the password reached the proxy's log");
  assert.ok(
    !log.includes(Buffer.from(`${USER.username}:${USER.password}`).toString("base64")),
    "basic credentials reached the proxy's log",
  );
});
