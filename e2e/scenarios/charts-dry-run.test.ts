// Every object the charts render (every toggle on), sent to the real apiserver as a server-side
// apply with dryRun=All: schemas, CRD validity, RBAC objects, the admission chain (Pod Security
// "restricted" on the pods) run; nothing is stored. The ServiceMonitor and PrometheusRule are
// left out: the test apiserver serves no Prometheus Operator API (charts.test.ts covers them).
// The `helm test` hook (ServiceAccount, Role, RoleBinding, Pod) is sent as well.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type Manifest, template } from "@quarry/harness/helm";
import { useScenario } from "@quarry/harness/scenario";
import { isApiError, type ResourceType, resourcePath } from "@quarry/kube";

const scenario = useScenario("charts");

// kind → plural and scope, for what the charts render
const plurals: Record<string, [string, boolean]> = {
  ServiceAccount: ["serviceaccounts", true],
  ConfigMap: ["configmaps", true],
  Secret: ["secrets", true],
  Service: ["services", true],
  Pod: ["pods", true],
  Deployment: ["deployments", true],
  Role: ["roles", true],
  RoleBinding: ["rolebindings", true],
  ClusterRole: ["clusterroles", false],
  ClusterRoleBinding: ["clusterrolebindings", false],
  PodDisruptionBudget: ["poddisruptionbudgets", true],
  HorizontalPodAutoscaler: ["horizontalpodautoscalers", true],
  NetworkPolicy: ["networkpolicies", true],
  CustomResourceDefinition: ["customresourcedefinitions", false],
  ValidatingAdmissionPolicy: ["validatingadmissionpolicies", false],
  ValidatingAdmissionPolicyBinding: ["validatingadmissionpolicybindings", false],
};

function resourceType(m: Manifest): ResourceType {
  const entry = plurals[m.kind];
  assert.ok(entry, `no plural for ${m.kind}: add it`);
  const [group, version] = m.apiVersion.includes("/") ? m.apiVersion.split("/") : ["", m.apiVersion];
  return { group: group!, version: version!, plural: entry[0], kind: m.kind, namespaced: entry[1] };
}

async function dryRunApply(m: Manifest): Promise<void> {
  const scn = scenario();
  const rt = resourceType(m);
  const path = resourcePath(rt, m.metadata.namespace, m.metadata.name);
  try {
    await scn.admin.request("PATCH", path, {
      body: m,
      contentType: "application/apply-patch+yaml",
      query: { dryRun: "All", fieldManager: "quarry-charts-e2e", force: true },
    });
  } catch (err) {
    throw new Error(`${m.kind} ${m.metadata.name}: ${isApiError(err) ? err.message : err}`);
  }
}

type PodOwner = { template: { spec: { serviceAccountName: string } } };

/**
 * Dry-runs every object in order. The `helm test` Pod's ServiceAccount is created for real first:
 * the ServiceAccount admission plugin refuses a pod whose ServiceAccount is missing, even dry-run.
 */
async function dryRunAll(docs: Manifest[]): Promise<void> {
  const scn = scenario();
  for (const m of docs) {
    if (m.kind === "Pod") {
      const name = (m.spec as { serviceAccountName: string }).serviceAccountName;
      const sa = docs.find((d) => d.kind === "ServiceAccount" && d.metadata.name === name);
      assert.ok(sa, `${m.metadata.name}: its ServiceAccount ${name} is rendered`);
      await scn.admin
        .request("POST", `/api/v1/namespaces/${scn.namespace}/serviceaccounts`, { body: sa })
        .catch((err: unknown) => {
          if (!isApiError(err, 409)) throw err;
        });
    }
    await dryRunApply(m);
  }
}

const everythingOn = [
  "--set=crds.enabled=true",
  // its Service, Secret, RBAC and NetworkPolicy
  "--set=lifecycle-controller.conversionWebhook.enabled=true",
  ...[
    "lifecycle-controller",
    "run-controller",
    "git-resolver",
    "bundle-resolver",
    "cluster-resolver",
    "pipe-resolver",
    "http-resolver",
    "hub-resolver",
  ].flatMap((s) => [
    `--set=${s}.podDisruptionBudget.enabled=true`,
    `--set=${s}.autoscaling.enabled=true`,
    `--set=${s}.networkPolicy.enabled=true`,
  ]),
];

test("every rendered object is accepted by the apiserver (server-side apply, dryRun=All)", async () => {
  const scn = scenario();
  const docs = template("quarry", everythingOn, scn.namespace);
  assert.ok(docs.length > 60, `${docs.length} objects`);
  await dryRunAll(docs);
});

test("the default render (deploy/) is accepted too, and its pods pass Pod Security 'restricted'", async () => {
  const scn = scenario();
  await scn.admin.request("PATCH", `/api/v1/namespaces/${scn.namespace}`, {
    body: { metadata: { labels: { "pod-security.kubernetes.io/enforce": "restricted" } } },
    contentType: "application/merge-patch+json",
  });
  const docs = template("quarry", [], scn.namespace);
  // the `helm test` hook's pod too: it meets Pod Security restricted like the services'
  assert.ok(docs.some((d) => d.kind === "Pod" && d.metadata.annotations?.["helm.sh/hook"] === "test"));
  await dryRunAll(docs);
  // PodSecurity enforces on pods, not Deployments: dry-run a pod of each Deployment's template
  const deployments = docs.filter((d) => d.kind === "Deployment");
  assert.equal(deployments.length, 8);
  for (const d of deployments) {
    // the ServiceAccount admission plugin refuses a pod whose ServiceAccount is missing (even dry-run)
    const sa = docs.find(
      (m) =>
        m.kind === "ServiceAccount" &&
        m.metadata.name === (d.spec as PodOwner).template.spec.serviceAccountName,
    );
    assert.ok(sa);
    await scn.admin.request("POST", `/api/v1/namespaces/${scn.namespace}/serviceaccounts`, { body: sa });
    const tpl = (d.spec as { template: { metadata: object; spec: object } }).template;
    await dryRunApply({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { ...tpl.metadata, name: `${d.metadata.name}-probe`, namespace: scn.namespace },
      spec: tpl.spec,
    });
  }
  // the control: Pod Security is on, a pod without the chart's securityContext is refused
  const first = deployments[0]!;
  const plain = (first.spec as { template: { spec: { containers: { securityContext?: unknown }[] } } })
    .template.spec;
  await assert.rejects(
    dryRunApply({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "unrestricted-probe", namespace: scn.namespace },
      spec: {
        ...plain,
        securityContext: {},
        containers: plain.containers.map((c) => ({ ...c, securityContext: {} })),
      },
    }),
    /restricted/,
  );
});
