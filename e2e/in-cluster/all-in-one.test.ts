// fleet.test.ts's resolution checks against the umbrella chart in all-in-one mode
// (global.mode=all-in-one): helm installs one Deployment, quarry-all-in-one, whose
// one pod (the all-in-one image) runs every component under ServiceAccount
// quarry-all-in-one in a namespace enforcing the restricted Pod Security level;
// git, bundle, cluster, http and hub requests resolve from the same sources;
// `helm test` passes; `helm upgrade --set git-resolver.enabled=false` takes git
// out of the process (the pod rolls with QUARRY_COMPONENTS without git) and git
// requests time out naming the type while the other sources keep resolving;
// `helm uninstall` leaves nothing but the kept CRDs.
//
// The tests run in order on one install. The fleet's replica, rolling-update and
// pod-deletion steps have no counterpart here: the process is one Deployment
// with one set of buckets (docs/testing.md, "Both modes").
import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { ResolutionRequest } from "@quarry/api";
import { applyObject } from "@quarry/devcluster/apply";
import { kinds } from "@quarry/devcluster/kinds";
import { waitUntil } from "@quarry/devcluster/wait";
import { hubTask } from "@quarry/harness/hub-scenario";
import {
  helm,
  importServiceImages,
  podGet,
  podLogTail,
  releaseLeftovers,
  servicePods,
  sumMetric,
  waitDeploymentsAvailable,
} from "@quarry/harness/in-cluster";
import { type InClusterSources, startInClusterSources } from "@quarry/harness/in-cluster-sources";
import { sharedNode } from "@quarry/harness/node";
import {
  createRequest,
  dataOf,
  resolvedOk,
  succeeded,
  taskManifest,
  useScenario,
  waitForRequest,
} from "@quarry/harness/scenario";
import type { KubeObject } from "@quarry/kube";
import yaml from "js-yaml";

// the fleet file's release and namespace: the CRDs either install keeps are adopted by the other
const RELEASE = "quarry";
const SYSTEM = "quarry-system";
const PROCESS = "all-in-one";
const GLOBAL_TIMEOUT = "20s";
const restricted = { "pod-security.kubernetes.io/enforce": "restricted" };

const scenario = useScenario("tenant-aio");
let sources: InClusterSources;
let valuesFile: string;

before(async () => {
  const node = await sharedNode();
  const t0 = Date.now();
  // the lifecycle controller's image runs `helm test`; the fleet file builds the others
  const images = await importServiceImages(node, [PROCESS, "lifecycle-controller"]);
  console.log(`the all-in-one image built or found and imported in ${Date.now() - t0} ms`);
  sources = await startInClusterSources(node, scenario().admin);
  const image = (name: string) => {
    const slash = name.indexOf("/");
    const colon = name.lastIndexOf(":");
    return {
      registry: name.slice(0, slash),
      repository: name.slice(slash + 1, colon),
      tag: name.slice(colon + 1),
      pullPolicy: "Never",
    };
  };
  const values = sources.values();
  values.global = { ...values.global, mode: "all-in-one" };
  // debug: a failing assertion below prints the pod's log, which then has every resolution step
  values.allInOne = { image: image(images[PROCESS]!), env: { LOG_LEVEL: "debug" } };
  values["lifecycle-controller"] = {
    // the helm test hook runs the lifecycle controller's image
    image: image(images["lifecycle-controller"]!),
    config: { "default-maximum-resolution-timeout": GLOBAL_TIMEOUT },
  };
  valuesFile = join(tmpdir(), `quarry-in-cluster-aio-values-${process.pid}.yaml`);
  writeFileSync(valuesFile, yaml.dump(values));
});

after(async () => {
  await sources?.stop();
  rmSync(valuesFile, { force: true });
});

const umbrella = () => [RELEASE, "charts/quarry", "--namespace", SYSTEM, "--values", valuesFile];

async function resolve(rr: ResolutionRequest, timeoutMs = 60_000): Promise<ResolutionRequest> {
  const scn = scenario();
  await createRequest(scn.admin, rr);
  return waitForRequest(
    scn,
    rr.metadata.name!,
    (r) => succeeded(r)?.status !== undefined && succeeded(r)?.status !== "Unknown",
    timeoutMs,
  );
}

function assertResolved(rr: ResolutionRequest): void {
  assert.ok(resolvedOk(rr), `${rr.metadata.name}: ${JSON.stringify(succeeded(rr))}`);
}

interface Deployment extends KubeObject {
  spec: {
    template: { spec: { containers: { env?: { name: string; value?: string }[] }[] } };
  };
}

/** QUARRY_COMPONENTS of the process's Deployment. */
async function components(): Promise<string | undefined> {
  const dep = await scenario().admin.get<Deployment>(kinds.Deployment!, SYSTEM, `quarry-${PROCESS}`);
  return dep.spec.template.spec.containers[0]?.env?.find((e) => e.name === "QUARRY_COMPONENTS")?.value;
}

test("helm installs the umbrella in all-in-one mode: one Deployment, one Ready pod under quarry-all-in-one", async () => {
  const scn = scenario();
  await applyObject(scn.admin, {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: SYSTEM, labels: restricted },
  });
  const t0 = Date.now();
  helm(["install", ...umbrella(), "--wait", "--timeout", "5m"]);
  await waitDeploymentsAvailable(scn.admin, SYSTEM);
  console.log(`helm install to the Deployment available: ${Date.now() - t0} ms`);
  const deployments = (await scn.admin.list<KubeObject>(kinds.Deployment!, SYSTEM)).items;
  assert.deepEqual(
    deployments.map((d) => d.metadata.name),
    [`quarry-${PROCESS}`],
  );
  assert.equal(await components(), "lifecycle,run,cluster,git,bundle,pipe,http,hub");
  const pods = await servicePods(scn.admin, SYSTEM, PROCESS);
  assert.equal(pods.length, 1, "one Ready pod");
  const pod = pods[0]!;
  assert.equal(pod.spec.serviceAccountName, "quarry-all-in-one");
  const mounts = pod.spec.containers[0]!.volumeMounts ?? [];
  assert.ok(mounts.some((m) => m.mountPath === "/var/run/secrets/kubernetes.io/serviceaccount"));
  const ready = JSON.parse(await podGet(pod, "/readyz")) as { ready?: boolean };
  assert.notEqual(ready.ready, false, "/readyz");
});

test("helm test resolves one request end to end through the one process", () => {
  const out = helm(["test", RELEASE, "--namespace", SYSTEM, "--timeout", "3m"]);
  assert.match(out, /TEST SUITE:\s+quarry-helm-test[\s\S]*Phase:\s+Succeeded/);
});

test("git, bundle, cluster, http and hub requests resolve through the one process", async () => {
  const scn = scenario();
  const ns = scn.namespace;
  await applyObject(scn.admin, taskManifest(ns, "local-task"));
  const [g, b, c, h, hb] = await Promise.all([
    resolve(sources.gitRequest(ns, "git-first")),
    resolve(sources.bundleRequest(ns, "bundle-first")),
    resolve(sources.clusterRequest(ns, "cluster-first")),
    resolve(sources.httpRequest(ns, "http-first")),
    resolve(sources.hubRequest(ns, "hub-first")),
  ]);
  for (const rr of [g, b, c, h, hb]) assertResolved(rr);
  assert.match(dataOf(g), /kind: Task/);
  assert.match(dataOf(b), /hello/);
  assert.match(dataOf(c), /local-task/);
  assert.match(dataOf(h), /fetched-over-http/);
  assert.equal(dataOf(hb), hubTask("git-clone", "fetched-from-hub"));
  // every source counted by the process's one resolution histogram
  const [pod] = await servicePods(scn.admin, SYSTEM, PROCESS);
  const metrics = await podGet(pod!, "/metrics");
  for (const type of ["git", "bundles", "cluster", "http", "hub"])
    assert.ok(
      sumMetric(metrics, "quarry_resolution_duration_seconds_count", { type, outcome: "succeeded" }) >= 1,
      type,
    );
});

test("helm upgrade with git-resolver.enabled=false takes git out of the process; the other sources keep resolving", async () => {
  const scn = scenario();
  const ns = scn.namespace;
  helm(["upgrade", ...umbrella(), "--set", "git-resolver.enabled=false", "--wait", "--timeout", "5m"]);
  await waitDeploymentsAvailable(scn.admin, SYSTEM);
  assert.equal(await components(), "lifecycle,run,cluster,bundle,pipe,http,hub");
  // the old pod (with git) gone: only the new one answers
  await waitUntil(
    "one pod of the process, without git",
    async () => {
      const pods = (
        await scn.admin.list<KubeObject>(kinds.Pod!, SYSTEM, {
          labelSelector: `app.kubernetes.io/name=${PROCESS}`,
        })
      ).items;
      return pods.length === 1 && (await servicePods(scn.admin, SYSTEM, PROCESS)).length === 1;
    },
    { timeoutMs: 90_000, intervalMs: 500 },
  );
  const [pod] = await servicePods(scn.admin, SYSTEM, PROCESS);
  const [g, b, c] = await Promise.all([
    resolve(sources.gitRequest(ns, "git-off"), 60_000),
    resolve(sources.bundleRequest(ns, "bundle-on")),
    resolve(sources.clusterRequest(ns, "cluster-on")),
  ]);
  const cond = succeeded(g);
  assert.equal(cond?.status, "False");
  assert.equal(cond?.reason, "ResolutionTimedOut");
  assert.equal(cond?.message, `no resolver for type git answered within ${GLOBAL_TIMEOUT}`);
  try {
    assertResolved(b);
    assertResolved(c);
  } catch (err) {
    console.error(podLogTail(await sharedNode(), pod!));
    throw err;
  }
  const timedOut = sumMetric(await podGet(pod!, "/metrics"), "quarry_resolution_requests_timed_out_total", {
    type: "git",
    reason: "NoResolver",
  });
  assert.ok(timedOut >= 1, `quarry_resolution_requests_timed_out_total{type="git"} = ${timedOut}`);
});

test("helm uninstall leaves nothing behind but the kept CRDs", async () => {
  const scn = scenario();
  helm(["uninstall", RELEASE, "--namespace", SYSTEM, "--wait", "--timeout", "3m"]);
  await waitUntil(
    "nothing left of the release",
    async () => (await releaseLeftovers(scn.admin, SYSTEM, "quarry")).length === 0,
    { timeoutMs: 90_000, intervalMs: 1000 },
  ).catch(() => {});
  assert.deepEqual(await releaseLeftovers(scn.admin, SYSTEM, "quarry"), []);
  const crd = await scn.admin.get<KubeObject>(
    kinds.CustomResourceDefinition!,
    undefined,
    "resolutionrequests.resolution.tekton.dev",
  );
  assert.equal(crd.metadata.annotations?.["helm.sh/resource-policy"], "keep");
});
