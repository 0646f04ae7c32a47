// quarry-e2e: needs-node
// The cluster resolver's image (dev/image-builder/src/build-layout.ts: the tree images/Dockerfile
// makes, built without docker) runs as a pod on the real node: non-root 65532,
// read-only root FS, ALL capabilities dropped, seccomp RuntimeDefault, in-cluster
// config from a projected ServiceAccount token bound to its chart's RBAC. It
// becomes Ready on /readyz, resolves a cluster request, and on deletion exits 0
// on SIGTERM within its grace period (Node as PID 1 runs the services' handlers).
//
// The pod here runs with hostNetwork and a hand-made token volume, as this test
// was written before the node had a pod network and runs on the scenarios' control
// plane (no ServiceAccount admission). It differs from the restricted pod in that
// single field: enforce=restricted admits the pod without hostNetwork and rejects the
// running one for host namespaces alone. The chart's own pods, restricted and on the
// pod network, run in the in-cluster suite (e2e/in-cluster/fleet.test.ts).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { before, test } from "node:test";
import { promisify } from "node:util";
import { applyObject } from "@quarry/devcluster/apply";
import { freePort } from "@quarry/devcluster/controlplane";
import { kinds } from "@quarry/devcluster/kinds";
import { waitUntil } from "@quarry/devcluster/wait";
import { nodePod, type Pod, pods, type SharedNode, sharedNode, waitForPod } from "@quarry/harness/node";
import {
  createRequest,
  dataOf,
  newRequest,
  resolvedOk,
  taskManifest,
  useScenario,
  waitForRequest,
} from "@quarry/harness/scenario";
import { buildServiceImage } from "@quarry/image-builder/build-layout";
import { isApiError, type KubeObject } from "@quarry/kube";

const run = promisify(execFile);
const scenario = useScenario("node-image", { start: ["lifecycle-controller"] });
const KEEP = "quarry.dev/e2e-keep";
const SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
let node: SharedNode;
let image: string;

before(async () => {
  node = await sharedNode();
  const t0 = Date.now();
  const built = await buildServiceImage("cluster-resolver");
  const built1 = Date.now();
  // the node's containerd, as dev/devcluster/src/node.ts imports its own images
  const ctr = ["--address", join(node.dir, "containerd.sock"), "--namespace", "k8s.io"];
  await run("ctr", [...ctr, "images", "import", built.tar]);
  const listed = (await run("ctr", [...ctr, "images", "list", "--quiet"])).stdout.split("\n");
  assert.ok(listed.includes(built.name), `ctr did not list ${built.name}`);
  image = built.name;
  console.log(
    `image ${built.name}: build ${built1 - t0} ms, import ${Date.now() - built1} ms, ` +
      `${built.compressed} bytes compressed, ${built.uncompressed} uncompressed`,
  );
});

/** The pod a chart would run, but for hostNetwork (see the header) and the ports it picks. */
function resolverPod(namespace: string, name: string, port: number, hostNetwork: boolean): Pod {
  const server = new URL(scenario().cp.server);
  // the finalizer keeps the object, with the container's terminated state, after the kubelet is done
  const meta = { finalizers: [KEEP] };
  const pod = nodePod(
    node,
    namespace,
    name,
    {
      serviceAccountName: "quarry-cluster-resolver",
      // the ServiceAccount admission plugin is off in the test control plane: the token
      // volume it would add is spelled out (a bound token the kubelet requests and refreshes)
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 20,
      securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: "RuntimeDefault" } },
      volumes: [
        {
          name: "kube-api-access",
          projected: {
            sources: [
              { serviceAccountToken: { path: "token", expirationSeconds: 3600 } },
              { configMap: { name: "apiserver-ca", items: [{ key: "ca.crt", path: "ca.crt" }] } },
              {
                downwardAPI: {
                  items: [{ path: "namespace", fieldRef: { fieldPath: "metadata.namespace" } }],
                },
              },
            ],
          },
        },
      ],
      containers: [
        {
          name: "cluster-resolver",
          image,
          imagePullPolicy: "Never",
          env: [
            // in-cluster config: the kubernetes Service has no endpoints here
            // (--endpoint-reconciler-type=none, no kube-proxy), so the address is the apiserver's own
            { name: "KUBERNETES_SERVICE_HOST", value: server.hostname },
            { name: "KUBERNETES_SERVICE_PORT", value: server.port },
            { name: "QUARRY_SYSTEM_NAMESPACE", value: namespace },
            { name: "QUARRY_WATCH_NAMESPACE", value: namespace },
            { name: "QUARRY_OPS_PORT", value: String(port) },
          ],
          readinessProbe: { httpGet: { path: "/readyz", port }, periodSeconds: 1 },
          volumeMounts: [{ name: "kube-api-access", mountPath: SA_DIR, readOnly: true }],
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            runAsNonRoot: true,
            capabilities: { drop: ["ALL"] },
          },
        },
      ],
    },
    meta,
  );
  if (!hostNetwork) delete pod.spec.hostNetwork;
  return pod;
}

const enforceRestricted = { "pod-security.kubernetes.io/enforce": "restricted" };

test("restricted Pod Security admits the resolver's pod; only hostNetwork sets the running one apart", async () => {
  const scn = scenario();
  const ns = await scn.extraNamespace("node-image-psa");
  await scn.admin.mergePatch(kinds.Namespace!, undefined, ns, { metadata: { labels: enforceRestricted } });
  const admitted = await scn.admin.create<Pod>(pods, resolverPod(ns, "restricted", 1, false));
  assert.equal(admitted.spec.hostNetwork, undefined);
  await assert.rejects(
    scn.admin.create<Pod>(pods, resolverPod(ns, "host-network", 1, true)),
    (err: unknown) => {
      assert.ok(isApiError(err, 403), String(err));
      const msg = (err as Error).message;
      assert.match(msg, /violates PodSecurity "restricted:latest": host namespaces \(hostNetwork=true\)/);
      // nothing else in the spec breaks the level
      assert.doesNotMatch(msg, /allowPrivilegeEscalation|capabilities|runAsNonRoot|seccompProfile|volume/);
      return true;
    },
  );
  await scn.admin.mergePatch(pods, ns, "restricted", { metadata: { finalizers: null } });
  await scn.admin.delete(pods, ns, "restricted", { gracePeriodSeconds: 0 });
});

test("the image runs as a pod: Ready on /readyz, resolves a Task, exits 0 on SIGTERM", async () => {
  const scn = scenario();
  const id = await scn.identity("cluster-resolver");
  assert.equal(id.serviceAccount, "quarry-cluster-resolver");
  await applyObject(scn.admin, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "apiserver-ca", namespace: scn.namespace },
    data: { "ca.crt": readFileSync(scn.cp.caFile, "utf8") },
  } as KubeObject);
  const port = await freePort();
  const t0 = Date.now();
  await scn.admin.create<Pod>(pods, resolverPod(scn.namespace, "cluster-resolver", port, true));
  const ready = await waitForPod(
    scn.admin,
    scn.namespace,
    "cluster-resolver",
    (p) => p.status?.containerStatuses?.[0]?.ready === true,
    90_000,
  );
  const readyMs = Date.now() - t0;
  assert.equal(ready.status?.containerStatuses?.[0]?.restartCount, 0);

  await applyObject(scn.admin, taskManifest(scn.namespace, "from-pod"));
  const t1 = Date.now();
  await createRequest(
    scn.admin,
    newRequest(scn.namespace, "from-pod", { "resolution.tekton.dev/type": "cluster" }, { name: "from-pod" }),
  );
  const rr = await waitForRequest(scn, "from-pod", resolvedOk);
  const resolveMs = Date.now() - t1;
  assert.match(dataOf(rr), /name: from-pod/);

  const t2 = Date.now();
  await scn.admin.delete(pods, scn.namespace, "cluster-resolver");
  // the kubelet sends SIGTERM and records how the container ended
  const ended = await waitForPod(
    scn.admin,
    scn.namespace,
    "cluster-resolver",
    (p) => p.status?.containerStatuses?.[0]?.state?.terminated !== undefined,
    30_000,
  );
  const stopMs = Date.now() - t2;
  await scn.admin.mergePatch(pods, scn.namespace, "cluster-resolver", { metadata: { finalizers: null } });
  const terminated = ended.status?.containerStatuses?.[0]?.state?.terminated;
  assert.equal(terminated?.exitCode, 0, JSON.stringify(terminated));
  assert.ok(stopMs < 20_000, `stopped in ${stopMs} ms, not within the 20 s grace period`);
  await waitUntil(
    "the pod gone",
    async () => {
      try {
        await scn.admin.get(pods, scn.namespace, "cluster-resolver");
        return false;
      } catch (err) {
        if (isApiError(err, 404)) return true;
        throw err;
      }
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
  console.log(`pod Ready in ${readyMs} ms, request resolved in ${resolveMs} ms, stopped in ${stopMs} ms`);
});
