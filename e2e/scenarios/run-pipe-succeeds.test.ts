// quarry-e2e: needs-node
//
// A Pipe run, Run and CustomRun alike: the run-controller asks the pipe
// resolver for the Pipe through one ResolutionRequest owned by the run; the
// pod really runs openssl on the test node; the run succeeds with a result per
// key naming the Secret/ConfigMap (what a later task reads as
// `$(tasks.<t>.results.<key>)`), which the run owns. Its status stays small and
// never holds the key.
import assert from "node:assert/strict";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { test } from "node:test";
import type { ResolutionRequest } from "@quarry/api";
import { waitUntil } from "@quarry/devcluster/wait";
import {
  CERT_PIPE,
  ownedBy,
  pipeRequestsOf,
  pipeRun,
  podsOf,
  usePipeRunScenario,
} from "@quarry/harness/pipe-runs";
import { resultsOf } from "@quarry/harness/pipe-scenario";
import { createRun, FLAVOURS, runSucceeded, waitForRun } from "@quarry/harness/runs";
import { configMaps, type KubeObject, secrets } from "@quarry/kube";

const scenario = usePipeRunScenario("run-pipe");

for (const flavour of FLAVOURS) {
  test(`${flavour}: a Pipe run makes a certificate into a Secret and names it in its results`, async () => {
    const { scn } = scenario();
    const name = `cert-${flavour.toLowerCase()}`;
    const created = await createRun(
      scn.admin,
      pipeRun(flavour, scn, name, CERT_PIPE, { params: [{ name: "cn", value: "api.example.test" }] }),
    );
    const run = await waitForRun(scn, flavour, name, undefined, 150_000);
    const c = runSucceeded(run)!;
    assert.equal(c.status, "True", `${c.reason}: ${c.message}`);
    assert.equal(c.reason, "Succeeded");

    const results = Object.fromEntries((run.status?.results ?? []).map((r) => [r.name, r.value]));
    assert.deepEqual(Object.keys(results).sort(), ["tls-crt", "tls-key"]);
    const secret = await scn.admin.get<KubeObject & { data?: Record<string, string> }>(
      secrets,
      scn.namespace,
      results["tls-key"]!,
    );
    const cm = await scn.admin.get<KubeObject & { binaryData?: Record<string, string> }>(
      configMaps,
      scn.namespace,
      results["tls-crt"]!,
    );
    // the files really came from openssl in the pod: the key matches the certificate
    const key = createPrivateKey(Buffer.from(secret.data!["tls.key"]!, "base64"));
    const cert = new X509Certificate(Buffer.from(cm.binaryData!["tls.crt"]!, "base64"));
    assert.ok(cert.checkPrivateKey(key), "the key is the certificate's");
    assert.match(cert.subject, /CN=api\.example\.test/);
    // owned by the run: they live as long as it does
    assert.ok(ownedBy(secret, created), "the Secret is owned by the run");
    assert.ok(ownedBy(cm, created), "the ConfigMap is owned by the run");

    // one request, owned by the run, recorded by reference
    const requests = await pipeRequestsOf(scn, name);
    assert.equal(requests.length, 1);
    const rr = requests[0] as ResolutionRequest;
    const owner = rr.metadata.ownerReferences?.[0];
    assert.equal(owner?.uid, created.metadata.uid);
    assert.equal(owner?.controller, true);
    assert.deepEqual(
      resultsOf(rr).map((r) => [r.key, r.name]),
      [
        ["tls-key", results["tls-key"]],
        ["tls-crt", results["tls-crt"]],
      ],
    );
    if (run.status?.childReferences !== undefined)
      assert.deepEqual(run.status.childReferences, [
        { apiVersion: "resolution.tekton.dev/v1beta1", kind: "ResolutionRequest", name: rr.metadata.name },
      ]);
    // small, and nothing of the key in it
    const status = JSON.stringify(run.status);
    assert.ok(status.length < 4096, `status is ${status.length} bytes`);
    assert.doesNotMatch(status, /PRIVATE KEY|BEGIN/);
    assert.ok(!status.includes(secret.data!["tls.key"]!.slice(0, 40)));

    // the pipe pod is gone once the files are stored
    await waitUntil("the pipe pod deleted", async () => (await podsOf(scn, rr)).length === 0 || undefined, {
      timeoutMs: 30_000,
    });
  });
}
