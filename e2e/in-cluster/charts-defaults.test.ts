// Every service chart installs on its own with its default values into a
// namespace enforcing Pod Security `restricted`: the Deployment's ReplicaSet
// gets its pod admitted (a pod the level refused would leave only a
// FailedCreate event), and `helm uninstall` leaves nothing of the release.
//
// One value differs from the defaults: image.pullPolicy=Never. The default
// image (ghcr.io/quarry-dev/<service>) cannot be pulled here, and the point is
// admission, not the image; fleet.test.ts runs the real images.
import assert from "node:assert/strict";
import { test } from "node:test";
import { applyObject } from "@quarry/devcluster/apply";
import { kinds } from "@quarry/devcluster/kinds";
import { waitUntil } from "@quarry/devcluster/wait";
import { helm, releaseLeftovers, services } from "@quarry/harness/in-cluster";
import { useScenario } from "@quarry/harness/scenario";
import type { KubeObject } from "@quarry/kube";

const scenario = useScenario("charts-defaults");
const restricted = { "pod-security.kubernetes.io/enforce": "restricted" };

interface Event extends KubeObject {
  reason?: string;
  message?: string;
}

for (const service of services) {
  test(`quarry-${service} installs with default values under restricted Pod Security; uninstall leaves nothing`, async () => {
    const scn = scenario();
    const ns = `defaults-${service}`;
    await applyObject(scn.admin, {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: ns, labels: restricted },
    });
    helm(["install", service, `charts/${service}`, "--namespace", ns, "--set", "image.pullPolicy=Never"]);
    const pod = await waitUntil(
      `a pod of quarry-${service} admitted`,
      async () => {
        const pods = (await scn.admin.list<KubeObject>(kinds.Pod!, ns)).items;
        if (pods.length > 0) return pods[0];
        const refused = (await scn.admin.list<Event>(kinds.Event!, ns)).items.find(
          (e) => e.reason === "FailedCreate",
        );
        if (refused) assert.fail(`the ReplicaSet's pod was refused: ${refused.message}`);
        return undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    assert.equal(
      (pod as KubeObject & { spec: { serviceAccountName: string } }).spec.serviceAccountName,
      `quarry-${service}`,
    );

    helm(["uninstall", service, "--namespace", ns, "--wait", "--timeout", "2m"]);
    const left = () => releaseLeftovers(scn.admin, ns, `quarry-${service}`);
    await waitUntil("nothing left of the release", async () => (await left()).length === 0, {
      timeoutMs: 60_000,
      intervalMs: 500,
    }).catch(() => {});
    assert.deepEqual(await left(), []);
    await scn.admin.delete(kinds.Namespace!, undefined, ns).catch(() => {});
  });
}
