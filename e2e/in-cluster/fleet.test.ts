// The product's promise on a real cluster: helm installs the
// umbrella chart into a namespace that enforces the restricted Pod Security
// level, every service runs as a pod under its own ServiceAccount (tokens from
// the ServiceAccount admission plugin, in-cluster config through the kubernetes
// Service), and git, bundle, cluster, http and hub requests resolve (hub from a
// protocol fixture of Artifact Hub's API, not a hub, whose URL the hub resolver
// reads from Tekton's hubresolver-config in Tekton's namespace, in place,
// through the Role the chart renders there). Deleting the git
// resolver's Deployment switches git off ("no resolver for type git answered
// within …") while the other sources keep working, and so does deleting the
// http resolver's for http and the hub resolver's for hub; `helm upgrade` with three
// git replicas brings it back and spreads requests over the three pods, none
// resolved twice; deleting one of the three pods moves its buckets and loses
// no request; `helm uninstall` leaves nothing behind but the kept CRDs.
//
// The tests run in order on one install: each step is the state the next starts from.
import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type ResolutionRequest, resolutionRequests } from "@quarry/api";
import { applyObject } from "@quarry/devcluster/apply";
import { kinds } from "@quarry/devcluster/kinds";
import { waitUntil } from "@quarry/devcluster/wait";
import { hubTask } from "@quarry/harness/hub-scenario";
import {
  helm,
  helmAsync,
  importServiceImages,
  podGet,
  releaseLeftovers,
  servicePods,
  services,
  sumMetric,
  waitDeploymentsAvailable,
} from "@quarry/harness/in-cluster";
import { type InClusterSources, startInClusterSources } from "@quarry/harness/in-cluster-sources";
import { type Pod, type SharedNode, sharedNode } from "@quarry/harness/node";
import {
  createRequest,
  dataOf,
  resolvedOk,
  succeeded,
  taskManifest,
  useScenario,
  waitForRequest,
} from "@quarry/harness/scenario";
import { type KubeObject, type Lease, leases } from "@quarry/kube";
import yaml from "js-yaml";

const RELEASE = "quarry";
const SYSTEM = "quarry-system";
const BUCKETS = 6;
// short while a switched-off source is shown failing; Tekton's default (1m) from the upgrade on
const GLOBAL_TIMEOUT = "20s";
const DEFAULT_GLOBAL_TIMEOUT = "1m";
const restricted = { "pod-security.kubernetes.io/enforce": "restricted" };

const scenario = useScenario("tenant");
let node: SharedNode;
/** git, a registry, a web server and a hub fixture on the host's pod-network address. */
let sources: InClusterSources;
let valuesFile: string;
let values: Record<string, Record<string, unknown>>;

before(async () => {
  node = await sharedNode();
  const t0 = Date.now();
  const images = await importServiceImages(node);
  console.log(`${services.length} images built or found and imported in ${Date.now() - t0} ms`);
  sources = await startInClusterSources(node, scenario().admin);

  // <registry>/<repository>:<tag> as built (quarry.local/<service>:local) → the charts' image values
  const image = (service: string) => {
    const name = images[service]!;
    const slash = name.indexOf("/");
    const colon = name.lastIndexOf(":");
    return {
      registry: name.slice(0, slash),
      repository: name.slice(slash + 1, colon),
      tag: name.slice(colon + 1),
      pullPolicy: "Never",
    };
  };
  values = sources.values();
  for (const s of services) values[s] = { ...values[s], image: image(s) };
  Object.assign(values["lifecycle-controller"]!, {
    config: { "default-maximum-resolution-timeout": GLOBAL_TIMEOUT },
  });
  Object.assign(values["git-resolver"]!, {
    // short leases so a deleted pod's buckets move within seconds
    leaderElection: {
      enabled: true,
      buckets: BUCKETS,
      leaseDuration: "4s",
      renewDeadline: "3s",
      retryPeriod: "500ms",
    },
  });
  valuesFile = join(tmpdir(), `quarry-in-cluster-values-${process.pid}.yaml`);
  writeFileSync(valuesFile, yaml.dump(values));
});

after(async () => {
  await sources?.stop();
  rmSync(valuesFile, { force: true });
});

const gitRequest = (name: string, path?: string) => sources.gitRequest(scenario().namespace, name, path);

/** The umbrella release with the suite's values, as `helm install|upgrade` takes it. */
const umbrella = () => [RELEASE, "charts/quarry", "--namespace", SYSTEM, "--values", valuesFile];

const bundleRequest = (name: string) => sources.bundleRequest(scenario().namespace, name);
const httpRequest = (name: string) => sources.httpRequest(scenario().namespace, name);
const hubRequest = (name: string) => sources.hubRequest(scenario().namespace, name);
/** The Task `local-task` the second test creates in the tenant namespace. */
const clusterRequest = (name: string) => sources.clusterRequest(scenario().namespace, name);

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

/** Resolved git requests per git-resolver pod, from each pod's /metrics. */
async function gitResolvedByPod(): Promise<Map<string, number>> {
  const pods = await servicePods(scenario().admin, SYSTEM, "git-resolver");
  const counts = new Map<string, number>();
  for (const p of pods)
    counts.set(
      p.metadata.name!,
      sumMetric(await podGet(p, "/metrics"), "quarry_resolution_duration_seconds_count", {
        type: "git",
        outcome: "succeeded",
      }),
    );
  return counts;
}

test("helm installs the umbrella into a restricted namespace; every service is Ready under its own ServiceAccount", async () => {
  const scn = scenario();
  await applyObject(scn.admin, {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: SYSTEM, labels: restricted },
  });
  // the values schema refuses a wrong type before anything is installed
  assert.throws(
    () => helm(["install", ...umbrella(), "--set", "git-resolver.replicas=two"]),
    /replicas: Invalid type\. Expected: integer, given: string/,
  );
  const t0 = Date.now();
  const installed = helm(["install", ...umbrella(), "--wait", "--timeout", "5m"]);
  // NOTES.txt: what was installed and how to check it
  assert.match(installed, new RegExp(`helm test ${RELEASE} -n ${SYSTEM}`));
  assert.match(installed, /quarry-git-resolver {2}quarry\.local\/git-resolver:local/);
  await waitDeploymentsAvailable(scn.admin, SYSTEM);
  console.log(`helm install to every Deployment available: ${Date.now() - t0} ms`);
  for (const s of services) {
    const pods = await servicePods(scn.admin, SYSTEM, s);
    assert.equal(pods.length, 1, `${s}: one Ready pod`);
    const pod = pods[0]!;
    assert.equal(pod.spec.serviceAccountName, `quarry-${s}`);
    assert.equal(pod.spec.hostNetwork, undefined, "on the pod network, not the host's");
    // the token came from the ServiceAccount admission plugin, not from the chart
    const mounts = pod.spec.containers[0]!.volumeMounts ?? [];
    assert.ok(mounts.some((m) => m.mountPath === "/var/run/secrets/kubernetes.io/serviceaccount"));
    const ready = JSON.parse(await podGet(pod, "/readyz")) as { ready?: boolean };
    assert.notEqual(ready.ready, false, `${s} /readyz`);
  }
  const ns = await scn.admin.get<KubeObject>(kinds.Namespace!, undefined, SYSTEM);
  assert.equal(ns.metadata.labels?.["pod-security.kubernetes.io/enforce"], "restricted");
});

test("helm test resolves one request end to end (the chart's test hook) and cleans up after itself", async () => {
  const scn = scenario();
  const out = helm(["test", RELEASE, "--namespace", SYSTEM, "--timeout", "3m"]);
  assert.match(out, /TEST SUITE:\s+quarry-helm-test[\s\S]*Phase:\s+Succeeded/);
  // the passed hook's objects are deleted (helm.sh/hook-delete-policy: hook-succeeded)
  await waitUntil(
    "the helm test pod gone",
    async () =>
      (await scn.admin.list<Pod>(kinds.Pod!, SYSTEM, { labelSelector: "app.kubernetes.io/name=helm-test" }))
        .items.length === 0,
    { timeoutMs: 60_000 },
  );
});

test("git, bundle, cluster, http and hub requests resolve through the in-cluster fleet", async () => {
  const scn = scenario();
  await applyObject(scn.admin, taskManifest(scn.namespace, "local-task"));
  const [g, b, c, h, hb] = await Promise.all([
    resolve(gitRequest("git-first")),
    resolve(bundleRequest("bundle-first")),
    resolve(clusterRequest("cluster-first")),
    resolve(httpRequest("http-first")),
    resolve(hubRequest("hub-first")),
  ]);
  for (const rr of [g, b, c, h, hb]) assertResolved(rr);
  assert.match(dataOf(g), /kind: Task/);
  assert.match(dataOf(b), /hello/);
  assert.match(dataOf(c), /local-task/);
  assert.match(dataOf(h), /fetched-over-http/);
  assert.equal(dataOf(hb), hubTask("git-clone", "fetched-from-hub"));
});

test("deleting quarry-git-resolver switches git off with a clear message; bundles and cluster keep resolving", async () => {
  const scn = scenario();
  await scn.admin.delete(kinds.Deployment!, SYSTEM, "quarry-git-resolver", {
    propagationPolicy: "Foreground",
  });
  await waitUntil(
    "the git resolver's pods gone",
    async () =>
      (
        await scn.admin.list<Pod>(kinds.Pod!, SYSTEM, {
          labelSelector: "app.kubernetes.io/name=git-resolver",
        })
      ).items.length === 0,
    { timeoutMs: 60_000 },
  );
  const [g, b, c] = await Promise.all([
    resolve(gitRequest("git-off"), 60_000),
    resolve(bundleRequest("bundle-on")),
    resolve(clusterRequest("cluster-on")),
  ]);
  const cond = succeeded(g);
  assert.equal(cond?.status, "False");
  assert.equal(cond?.reason, "ResolutionTimedOut");
  assert.equal(cond?.message, `no resolver for type git answered within ${GLOBAL_TIMEOUT}`);
  assertResolved(b);
  assertResolved(c);
  // counted where the QuarryResolutionTimeouts alert reads it
  const [lifecycle] = await servicePods(scn.admin, SYSTEM, "lifecycle-controller");
  const timedOut = sumMetric(
    await podGet(lifecycle!, "/metrics"),
    "quarry_resolution_requests_timed_out_total",
    {
      type: "git",
      reason: "NoResolver",
    },
  );
  assert.ok(
    timedOut >= 1,
    `quarry_resolution_requests_timed_out_total{type="git",reason="NoResolver"} = ${timedOut}`,
  );
});

test("deleting quarry-http-resolver switches http off; bundles and cluster keep resolving", async () => {
  const scn = scenario();
  await scn.admin.delete(kinds.Deployment!, SYSTEM, "quarry-http-resolver", {
    propagationPolicy: "Foreground",
  });
  await waitUntil(
    "the http resolver's pods gone",
    async () =>
      (
        await scn.admin.list<Pod>(kinds.Pod!, SYSTEM, {
          labelSelector: "app.kubernetes.io/name=http-resolver",
        })
      ).items.length === 0,
    { timeoutMs: 60_000 },
  );
  const [h, b, c] = await Promise.all([
    resolve(httpRequest("http-off"), 60_000),
    resolve(bundleRequest("bundle-on-2")),
    resolve(clusterRequest("cluster-on-2")),
  ]);
  const cond = succeeded(h);
  assert.equal(cond?.status, "False");
  assert.equal(cond?.reason, "ResolutionTimedOut");
  assert.equal(cond?.message, `no resolver for type http answered within ${GLOBAL_TIMEOUT}`);
  assertResolved(b);
  assertResolved(c);
});

test("deleting quarry-hub-resolver switches hub off; bundles and cluster keep resolving", async () => {
  const scn = scenario();
  await scn.admin.delete(kinds.Deployment!, SYSTEM, "quarry-hub-resolver", {
    propagationPolicy: "Foreground",
  });
  await waitUntil(
    "the hub resolver's pods gone",
    async () =>
      (
        await scn.admin.list<Pod>(kinds.Pod!, SYSTEM, {
          labelSelector: "app.kubernetes.io/name=hub-resolver",
        })
      ).items.length === 0,
    { timeoutMs: 60_000 },
  );
  const asked = sources.hub.requests.length;
  const [hb, b, c] = await Promise.all([
    resolve(hubRequest("hub-off"), 60_000),
    resolve(bundleRequest("bundle-on-3")),
    resolve(clusterRequest("cluster-on-3")),
  ]);
  const cond = succeeded(hb);
  assert.equal(cond?.status, "False");
  assert.equal(cond?.reason, "ResolutionTimedOut");
  assert.equal(cond?.message, `no resolver for type hub answered within ${GLOBAL_TIMEOUT}`);
  assert.equal(sources.hub.requests.length, asked, "the hub fixture heard nothing");
  assertResolved(b);
  assertResolved(c);
});

test("helm upgrade with 3 git replicas: requests spread over the three pods, none resolved twice", async () => {
  const scn = scenario();
  values["lifecycle-controller"]!.config = { "default-maximum-resolution-timeout": DEFAULT_GLOBAL_TIMEOUT };
  writeFileSync(valuesFile, yaml.dump(values));
  helm(["upgrade", ...umbrella(), "--set", "git-resolver.replicas=3", "--wait", "--timeout", "5m"]);
  await waitDeploymentsAvailable(scn.admin, SYSTEM, ["quarry-git-resolver"]);
  // every bucket held, two per pod (each takes at most ceil(6 / 3))
  await waitUntil(
    "6 git buckets held by 3 pods, 2 each",
    async () => {
      const held = await gitBucketHolders();
      const per = new Map<string, number>();
      for (const h of held.values()) if (h) per.set(h, (per.get(h) ?? 0) + 1);
      return (
        held.size === BUCKETS &&
        [...held.values()].every(Boolean) &&
        per.size === 3 &&
        [...per.values()].every((n) => n === 2)
      );
    },
    { timeoutMs: 60_000, intervalMs: 500 },
  );
  const before = await gitResolvedByPod();
  assert.equal(before.size, 3);
  const N = 30;
  const done = await Promise.all(Array.from({ length: N }, (_, i) => resolve(gitRequest(`git-spread-${i}`))));
  for (const rr of done) assertResolved(rr);
  const afterCounts = await gitResolvedByPod();
  const delta = [...afterCounts].map(([pod, n]) => [pod, n - (before.get(pod) ?? 0)] as const);
  console.log(`git requests per pod: ${delta.map(([p, n]) => `${p}=${n}`).join(", ")}`);
  assert.equal(
    delta.reduce((a, [, n]) => a + n, 0),
    N,
    "each request resolved exactly once",
  );
  for (const [pod, n] of delta) assert.ok(n > 0, `${pod} resolved none of ${N}`);
});

test("a rolling update of the three git pods under a stream of git requests loses none", async () => {
  const scn = scenario();
  const old = new Set((await servicePods(scn.admin, SYSTEM, "git-resolver")).map((p) => p.metadata.name));
  assert.equal(old.size, 3);
  const made: Promise<ResolutionRequest>[] = [];
  let streaming = true;
  // a request every 250 ms before, during and after the rollout
  const stream = (async () => {
    for (let i = 0; streaming; i++) {
      made.push(resolve(gitRequest(`git-roll-${i}`), 120_000));
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  await new Promise((r) => setTimeout(r, 2000));
  const t0 = Date.now();
  // a changed pod template: the Deployment replaces the pods one by one (maxSurge 1, maxUnavailable
  // 0 of 3), each old pod getting SIGTERM once its successor is Ready
  await helmAsync([
    "upgrade",
    ...umbrella(),
    ...[
      "--set",
      "git-resolver.replicas=3",
      "--set-string",
      "git-resolver.podAnnotations.quarry-e2e/rollout=1",
    ],
    ...["--wait", "--timeout", "5m"],
  ]);
  // how each old pod ended: from its SIGTERM to its container's exit, and the exit code
  const ended = new Map<string, string>();
  await waitUntil(
    "only new git pods, three of them Ready",
    async () => {
      const all = (
        await scn.admin.list<Pod>(kinds.Pod!, SYSTEM, {
          labelSelector: "app.kubernetes.io/name=git-resolver",
        })
      ).items;
      for (const p of all.filter((p) => old.has(p.metadata.name))) {
        const t = p.status?.containerStatuses?.[0]?.state?.terminated as
          | { exitCode: number; finishedAt?: string }
          | undefined;
        // deletionTimestamp is the deletion plus the grace period (30 s)
        const deleted = p.metadata.deletionTimestamp;
        if (t?.finishedAt && deleted)
          ended.set(
            p.metadata.name!,
            `exit ${t.exitCode} ${(Date.parse(t.finishedAt) - Date.parse(deleted) + 30_000) / 1000}s after SIGTERM`,
          );
      }
      const ready = await servicePods(scn.admin, SYSTEM, "git-resolver");
      return all.every((p) => !old.has(p.metadata.name)) && ready.length === 3;
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );
  const rolloutMs = Date.now() - t0;
  await new Promise((r) => setTimeout(r, 2000));
  streaming = false;
  await stream;
  const done = await Promise.all(made);
  const took = done.map((rr) => ({ rr, s: secondsToFinish(rr) })).sort((a, b) => b.s - a.s);
  console.log(
    `rolling update took ${rolloutMs} ms; ${done.length} git requests made around it; ` +
      `slowest ${took
        .slice(0, 5)
        .map(({ rr, s }) => `${rr.metadata.name} ${s}s (accepted by ${acceptedBy(rr)})`)
        .join(", ")}`,
  );
  console.log(`old pods: ${[...ended].map(([p, e]) => `${p} ${e}`).join(", ") || "none seen exiting"}`);
  assert.ok(done.length >= 20, `only ${done.length} requests made`);
  const failed = done
    .filter((rr) => !resolvedOk(rr))
    .map((rr) => `${rr.metadata.name}: ${succeeded(rr)?.message}`);
  assert.deepEqual(failed, []);
});

/** Whole seconds from a request's creation to its Succeeded condition (the apiserver's stamps). */
function secondsToFinish(rr: ResolutionRequest): number {
  const end = succeeded(rr)?.lastTransitionTime;
  const start = rr.metadata.creationTimestamp;
  return end && start ? (Date.parse(end) - Date.parse(start)) / 1000 : Number.NaN;
}

const acceptedBy = (rr: ResolutionRequest) => rr.status?.annotations?.["quarry.dev/accepted-by"] ?? "-";

async function gitBucketHolders(): Promise<Map<string, string>> {
  const list = await scenario().admin.list<Lease>(leases, SYSTEM, {
    labelSelector: "quarry.dev/lease=bucket",
  });
  return new Map(
    list.items
      .filter((l) => l.metadata.name?.startsWith("git-resolver."))
      .map((l) => [l.metadata.name ?? "", l.spec?.holderIdentity ?? ""]),
  );
}

test("deleting one of the three git pods moves its buckets and loses no request", async () => {
  const scn = scenario();
  const pods = await servicePods(scn.admin, SYSTEM, "git-resolver");
  assert.equal(pods.length, 3);
  const victim = pods[0]!.metadata.name!;
  const N = 30;
  const burst = Promise.all(
    Array.from({ length: N }, (_, i) => resolve(gitRequest(`git-kill-${i}`), 90_000)),
  );
  // SIGKILL, no grace: its Leases are not released and must expire
  await scn.admin.delete(kinds.Pod!, SYSTEM, victim, { gracePeriodSeconds: 0 });
  const done = await burst;
  for (const rr of done) assertResolved(rr);
  await waitUntil(
    `no bucket held by ${victim}`,
    async () => {
      const held = await gitBucketHolders();
      return [...held.values()].every((h) => h && h !== victim);
    },
    { timeoutMs: 30_000, intervalMs: 500 },
  );
});

test("helm uninstall leaves nothing behind but the kept CRDs", async () => {
  const scn = scenario();
  assert.ok(
    (await releaseLeftovers(scenario().admin, SYSTEM, "quarry")).some((l) =>
      l.startsWith("Lease git-resolver."),
    ),
    "the services made Leases",
  );
  helm(["uninstall", RELEASE, "--namespace", SYSTEM, "--wait", "--timeout", "3m"]);
  // pods stop within their grace period; the garbage collector then takes what the ConfigMaps owned
  await waitUntil(
    "nothing left of the release",
    async () => (await releaseLeftovers(scenario().admin, SYSTEM, "quarry")).length === 0,
    {
      timeoutMs: 90_000,
      intervalMs: 1000,
    },
  ).catch(() => {});
  assert.deepEqual(await releaseLeftovers(scn.admin, SYSTEM, "quarry"), []);
  // the CRDs stay (helm.sh/resource-policy: keep), and so do the requests in them
  const kept = [
    "resolutionrequests.resolution.tekton.dev",
    "pipes.quarry.dev",
    "runs.tekton.dev",
    "customruns.tekton.dev",
  ];
  for (const crd of kept) {
    const got = await scn.admin.get<KubeObject>(kinds.CustomResourceDefinition!, undefined, crd);
    assert.equal(got.metadata.annotations?.["helm.sh/resource-policy"], "keep", crd);
  }
  assert.ok((await scn.admin.list(resolutionRequests, scn.namespace)).items.length > 0);
});
