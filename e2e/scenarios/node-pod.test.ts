// The test node runs pods for real: a hostNetwork pod's init container runs
// openssl from the locally built tools image and writes a certificate into an
// emptyDir, the waiting container keeps it, and the file comes back through
// the exec subresource (apiserver -> kubelet -> containerd). kube-scheduler
// places a pod without nodeName on the Ready node, where it gets an address on
// the pod network (and not one whose nodeSelector no node matches), and
// kube-controller-manager's garbage collector deletes a dependent once its
// owner is gone.
import assert from "node:assert/strict";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { before, test } from "node:test";
import { waitUntil } from "@quarry/devcluster/wait";
import {
  initDoneAndRunning,
  nodePod,
  nodes,
  type Pod,
  pods,
  readFileFromPod,
  type SharedNode,
  sharedNode,
  waitForPod,
} from "@quarry/harness/node";
import { useScenario } from "@quarry/harness/scenario";
import { configMaps, isApiError, type KubeObject } from "@quarry/kube";

const scenario = useScenario("node-pod");
let node: SharedNode;
before(async () => {
  node = await sharedNode();
});

const gone = async (check: () => Promise<unknown>) => {
  try {
    await check();
    return false;
  } catch (err) {
    if (isApiError(err) && err.status === 404) return true;
    throw err;
  }
};

test("an init container writes a certificate with openssl; exec reads it back", async () => {
  const scn = scenario();
  const name = "make-cert";
  const out = { name: "out", mountPath: "/out" };
  await scn.admin.create<Pod>(
    pods,
    nodePod(node, scn.namespace, name, {
      nodeName: node.name,
      volumes: [{ name: "out", emptyDir: {} }],
      initContainers: [
        {
          name: "openssl",
          command: ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=test"],
          args: ["-keyout", "/out/key.pem", "-out", "/out/cert.pem", "-days", "1"],
          volumeMounts: [out],
        },
      ],
      containers: [{ name: "wait", command: ["sleep", "3600"], volumeMounts: [out] }],
    }),
  );
  const pod = await waitForPod(scn.admin, scn.namespace, name, initDoneAndRunning);
  const init = pod.status?.initContainerStatuses?.[0];
  assert.equal(init?.state?.terminated?.exitCode, 0);
  assert.equal(init?.state?.terminated?.reason, "Completed");
  assert.equal(pod.status?.phase, "Running");

  const certPem = await readFileFromPod(scn.cp, scn.namespace, name, "wait", "/out/cert.pem");
  const keyPem = await readFileFromPod(scn.cp, scn.namespace, name, "wait", "/out/key.pem");
  assert.match(certPem.toString("utf8"), /^-----BEGIN CERTIFICATE-----\n/);
  const cert = new X509Certificate(certPem);
  assert.equal(cert.subject, "CN=test");
  assert.equal(cert.issuer, "CN=test");
  const lifetimeMs = Date.parse(cert.validTo) - Date.parse(cert.validFrom);
  assert.ok(Math.abs(lifetimeMs - 86_400_000) < 5_000, `valid for ${lifetimeMs} ms, not a day`);
  assert.ok(cert.checkPrivateKey(createPrivateKey(keyPem)), "the key written beside it signs for it");

  await scn.admin.delete(pods, scn.namespace, name, { gracePeriodSeconds: 1 });
  // the object goes once the kubelet has stopped the containers and confirmed
  await waitUntil(
    "the pod deleted by the kubelet",
    () => gone(() => scn.admin.get(pods, scn.namespace, name)),
    {
      timeoutMs: 30_000,
      intervalMs: 250,
    },
  );
});

test("kube-scheduler places a pod on the Ready node (on the pod network), and not one no node matches", async () => {
  const scn = scenario();
  const spec = { containers: [{ name: "wait", command: ["sleep", "3600"] }] };
  const onNetwork = nodePod(node, scn.namespace, "scheduled", spec);
  delete onNetwork.spec.hostNetwork;
  await scn.admin.create<Pod>(pods, onNetwork);
  const unmatched = nodePod(node, scn.namespace, "unschedulable", spec);
  unmatched.spec.nodeSelector = { "quarry.dev/e2e": "no-such-node" };
  await scn.admin.create<Pod>(pods, unmatched);

  const placed = await waitForPod(scn.admin, scn.namespace, "scheduled", initDoneAndRunning);
  assert.equal(placed.spec.nodeName, node.name);
  assert.equal(placed.status?.conditions?.find((c) => c.type === "PodScheduled")?.status, "True");
  // the CNI bridge gave it an address of its own (pod-network.ts), not the host's
  assert.match((placed.status as { podIP?: string }).podIP ?? "", /^198\.18\.0\.\d+$/);

  const pending = await waitForPod(
    scn.admin,
    scn.namespace,
    "unschedulable",
    (p) =>
      p.status?.conditions?.some((c) => c.type === "PodScheduled" && c.reason === "Unschedulable") ?? false,
  );
  assert.equal(pending.spec.nodeName, undefined);
  assert.match(
    pending.status?.conditions?.find((c) => c.type === "PodScheduled")?.message ?? "",
    /didn't match Pod's node affinity\/selector/,
  );
  // Ready, and nodelifecycle lifted the not-ready taint the NodeTaint admission plugin put on it
  const n = await scn.admin.get<
    KubeObject & {
      spec: { taints?: { key: string; effect: string }[] };
      status: { conditions?: { type: string; status: string }[] };
    }
  >(nodes, undefined, node.name);
  assert.equal(n.status.conditions?.find((c) => c.type === "Ready")?.status, "True");
  assert.deepEqual(n.spec.taints ?? [], []);
  for (const name of ["scheduled", "unschedulable"])
    await scn.admin.delete(pods, scn.namespace, name, { gracePeriodSeconds: 1 });
});

test("kube-controller-manager garbage-collects a ConfigMap whose owner was deleted", async () => {
  const scn = scenario();
  const cm = (name: string, owner?: KubeObject): KubeObject & { data: Record<string, string> } => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name,
      namespace: scn.namespace,
      ...(owner && {
        ownerReferences: [
          { apiVersion: "v1", kind: "ConfigMap", name: owner.metadata.name!, uid: owner.metadata.uid! },
        ],
      }),
    },
    data: { x: "y" },
  });
  const owner = await scn.admin.create(configMaps, cm("owner"));
  await scn.admin.create(configMaps, cm("dependent", owner));
  await scn.admin.create(configMaps, cm("bystander"));

  await scn.admin.delete(configMaps, scn.namespace, "owner");
  await waitUntil(
    "the dependent garbage-collected",
    () => gone(() => scn.admin.get(configMaps, scn.namespace, "dependent")),
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  const bystander = await scn.admin.get<KubeObject>(configMaps, scn.namespace, "bystander");
  assert.equal(bystander.metadata.name, "bystander");
});
