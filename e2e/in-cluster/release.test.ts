// Installed as a user installs a release: scripts/release.sh's code releases this tree twice
// (0.1.0 and 0.1.1) into a registry on the host; the node's containerd pulls the images from it by
// digest (nothing imported into containerd). helm installs the umbrella from the OCI chart,
// upgrades to 0.1.1 while requests keep coming (none is lost), and uninstalls; then
// `kubectl apply -f release.yaml` installs the same fleet on this cluster, which already has the
// ResolutionRequest and CustomRun CRDs, as a cluster running Tekton does.
//
// The tests run in order: each step is the state the next starts from.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { ResolutionRequest } from "@quarry/api";
import { applyObject } from "@quarry/devcluster/apply";
import { kubectlBinary } from "@quarry/devcluster/controlplane";
import { kinds } from "@quarry/devcluster/kinds";
import { trustPlainHttpRegistry } from "@quarry/devcluster/node";
import { type Registry, startRegistry } from "@quarry/devcluster/registry";
import { waitUntil } from "@quarry/devcluster/wait";
import { sharedControlPlane } from "@quarry/harness/env";
import {
  helm,
  helmAsync,
  releaseLeftovers,
  servicePods,
  services,
  waitDeploymentsAvailable,
} from "@quarry/harness/in-cluster";
import { type SharedNode, sharedNode } from "@quarry/harness/node";
import {
  createRequest,
  newRequest,
  resolvedOk,
  succeeded,
  taskManifest,
  useScenario,
  waitForRequest,
} from "@quarry/harness/scenario";
import { type Release, release } from "@quarry/release/release";

const RELEASE = "quarry";
const SYSTEM = "quarry-system";
const VERSIONS = ["0.1.0", "0.1.1"] as const;

const scenario = useScenario("release");
let node: SharedNode;
let registry: Registry;
const releases: Record<string, Release> = {};
const work = mkdtempSync(join(tmpdir(), "quarry-release-e2e-"));

before(async () => {
  node = await sharedNode();
  // on the host's pod-network address: containerd pulls from it, as pods reach the host
  registry = await startRegistry({ address: node.hostAddress });
  trustPlainHttpRegistry(node.dir, registry.host);
  await applyObject(scenario().admin, taskManifest(scenario().namespace, "local-task"));
});

after(async () => {
  await registry?.stop();
  rmSync(work, { recursive: true, force: true });
});

const kubectl = (args: string[]) =>
  execFileSync(kubectlBinary(), [...args, "--kubeconfig", sharedControlPlane().adminKubeconfig], {
    encoding: "utf8",
    maxBuffer: 64 << 20,
  });

const clusterRequest = (name: string): ResolutionRequest =>
  newRequest(
    scenario().namespace,
    name,
    { "resolution.tekton.dev/type": "cluster" },
    {
      kind: "task",
      name: "local-task",
      cache: "never",
    },
  );

async function resolve(name: string, timeoutMs = 90_000): Promise<ResolutionRequest> {
  const scn = scenario();
  await createRequest(scn.admin, clusterRequest(name));
  return waitForRequest(scn, name, (r) => (succeeded(r)?.status ?? "Unknown") !== "Unknown", timeoutMs);
}

/** The images of the default (fleet) install: every service's but the all-in-one process's. */
const fleetImages = (rel: Release) => rel.images.filter((i) => i.service !== "all-in-one");

/** Every service's pods run the image the release pushed, by its digest. */
async function assertRunning(rel: Release): Promise<void> {
  for (const image of fleetImages(rel)) {
    const pods = await servicePods(scenario().admin, SYSTEM, image.service);
    assert.ok(pods.length > 0, `${image.service}: a Ready pod`);
    for (const pod of pods) {
      assert.equal(pod.spec.containers[0]!.image, `${image.repository}@${image.digest}`, image.service);
      const status = pod.status as { containerStatuses?: { imageID?: string }[] } | undefined;
      assert.match(status?.containerStatuses?.[0]?.imageID ?? "", new RegExp(`@${image.digest}$`));
    }
  }
}

const chart = () => `oci://${registry.host}/charts/quarry`;

test("the release script pushes every image by digest and every chart, and writes the install manifests", async () => {
  for (const version of VERSIONS) {
    const out = join(work, version);
    const t0 = Date.now();
    releases[version] = await release(
      { registry: registry.host, version, out, plainHttp: true, dockerfile: false },
      () => {},
    );
    console.log(`release ${version}: ${Date.now() - t0} ms`);
    const rel = releases[version]!;
    // every service's image and the all-in-one process's, which global.mode all-in-one installs
    assert.deepEqual(rel.images.map((i) => i.service).sort(), [...services, "all-in-one"].sort());
    assert.ok(rel.charts.some((c) => c.name === "quarry" && c.version === version));
    // the registry serves what the release recorded
    for (const image of rel.images) {
      const res = await fetch(`http://${registry.host}/v2/quarry-dev/${image.service}/manifests/${version}`, {
        method: "HEAD",
        headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
      });
      assert.equal(res.headers.get("docker-content-digest"), image.digest, image.service);
    }
    execFileSync("sha256sum", ["-c", "--quiet", "SHA256SUMS"], { cwd: out });
    const manifest = readFileSync(join(out, "release.yaml"), "utf8");
    for (const image of fleetImages(rel))
      assert.ok(manifest.includes(`${image.repository}@${image.digest}`), image.service);
    // Quarry's CRDs only; the other file adds Tekton's three
    assert.doesNotMatch(manifest, /name: resolutionrequests\.resolution\.tekton\.dev/);
    assert.match(
      readFileSync(join(out, "release-with-tekton-crds.yaml"), "utf8"),
      /name: resolutionrequests\.resolution\.tekton\.dev/,
    );
  }
  // the same tree under two versions: two images per service
  assert.notEqual(releases["0.1.0"]!.images[0]!.digest, releases["0.1.1"]!.images[0]!.digest);
});

test("helm installs 0.1.0 from the OCI chart; the node pulls every image by digest from the registry", async () => {
  const scn = scenario();
  await applyObject(scn.admin, {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: SYSTEM, labels: { "pod-security.kubernetes.io/enforce": "restricted" } },
  });
  helm([
    "install",
    RELEASE,
    chart(),
    "--version",
    "0.1.0",
    "--plain-http",
    "--namespace",
    SYSTEM,
    "--wait",
    "--timeout",
    "5m",
  ]);
  await waitDeploymentsAvailable(scn.admin, SYSTEM);
  await assertRunning(releases["0.1.0"]!);
  assert.ok(resolvedOk(await resolve("after-install")));
});

test("helm upgrade to 0.1.1 under a stream of requests: every pod moves to 0.1.1's images, no request is lost", async () => {
  const scn = scenario();
  const created: string[] = [];
  let upgrading = true;
  const stream = (async () => {
    for (let i = 0; upgrading; i++) {
      const name = `during-upgrade-${i}`;
      await createRequest(scn.admin, clusterRequest(name));
      created.push(name);
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  try {
    await helmAsync([
      "upgrade",
      RELEASE,
      chart(),
      "--version",
      "0.1.1",
      "--plain-http",
      "--namespace",
      SYSTEM,
      "--wait",
      "--timeout",
      "5m",
    ]);
    await waitDeploymentsAvailable(scn.admin, SYSTEM);
  } finally {
    upgrading = false;
    await stream;
  }
  await assertRunning(releases["0.1.1"]!);
  assert.ok(created.length >= 10, `${created.length} requests during the upgrade`);
  for (const name of created) {
    const rr = await waitForRequest(
      scn,
      name,
      (r) => (succeeded(r)?.status ?? "Unknown") !== "Unknown",
      90_000,
    );
    assert.ok(resolvedOk(rr), `${name}: ${JSON.stringify(succeeded(rr))}`);
  }
});

test("helm uninstall; kubectl apply -f release.yaml installs the same fleet, pinned by digest", async () => {
  const scn = scenario();
  helm(["uninstall", RELEASE, "--namespace", SYSTEM, "--wait", "--timeout", "3m"]);
  await waitUntil(
    "nothing left of the helm release",
    async () => (await releaseLeftovers(scn.admin, SYSTEM, "quarry")).length === 0,
    { timeoutMs: 90_000, intervalMs: 1000 },
  );
  const rel = releases["0.1.1"]!;
  const manifest = join(rel.out, "release.yaml");
  kubectl(["apply", "--server-side", "--force-conflicts", "-f", manifest]);
  await waitDeploymentsAvailable(scn.admin, SYSTEM);
  await assertRunning(rel);
  assert.ok(resolvedOk(await resolve("after-apply")));
  kubectl(["delete", "-f", manifest, "--wait", "--ignore-not-found", "--timeout", "3m"]);
  await waitUntil(
    "the Deployments gone",
    async () => (await scn.admin.list(kinds.Deployment!, SYSTEM)).items.length === 0,
    { timeoutMs: 90_000, intervalMs: 1000 },
  );
});
