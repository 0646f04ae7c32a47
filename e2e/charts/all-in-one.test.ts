// The umbrella's global.mode=all-in-one: one Deployment (services/all-in-one's image) running every
// enabled service, one ServiceAccount holding each service's rbac.yaml rules, each service's
// ConfigMap as in fleet mode, and no per-service Deployment, ServiceAccount or metrics Service.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { chartsDir, find, type Manifest, runHelm, services, template } from "@quarry/harness/helm";
import yaml from "js-yaml";

const AIO = ["--set=global.mode=all-in-one"];
const SA = "quarry-all-in-one";
/** Each service's name in QUARRY_COMPONENTS, in wiring order. */
const COMPONENT: Record<(typeof services)[number], string> = {
  "lifecycle-controller": "lifecycle",
  "run-controller": "run",
  "cluster-resolver": "cluster",
  "git-resolver": "git",
  "bundle-resolver": "bundle",
  "pipe-resolver": "pipe",
  "http-resolver": "http",
  "hub-resolver": "hub",
};

interface Rbac {
  serviceAccountName: string;
  clusterRules?: unknown[];
  namespaceRules?: unknown[];
}
const rbacOf = (chart: string) =>
  yaml.load(readFileSync(join(chartsDir, chart, "rbac.yaml"), "utf8")) as Rbac;

type Container = { name: string; image: string; env: { name: string; value?: string }[] };
const kinds = (docs: Manifest[], kind: string) =>
  docs
    .filter((d) => d.kind === kind)
    .map((d) => d.metadata.name)
    .sort();
function pod(docs: Manifest[]) {
  const dep = find(docs, "Deployment", SA) as unknown as {
    spec: { template: { spec: { serviceAccountName: string; containers: Container[] } } };
  };
  assert.ok(dep, "Deployment quarry-all-in-one");
  return dep.spec.template.spec;
}
const env = (docs: Manifest[]) =>
  Object.fromEntries(pod(docs).containers[0]!.env.map((e) => [e.name, e.value])) as Record<
    string,
    string | undefined
  >;

describe("umbrella, global.mode=all-in-one", () => {
  test("fleet (the default) renders nothing of the all-in-one process", () => {
    const docs = template("quarry");
    assert.equal(
      docs.some((d) => d.metadata.name.startsWith("quarry-all-in-one")),
      false,
    );
  });

  test("helm lint --strict passes in all-in-one mode", () => {
    runHelm(["lint", "--strict", join(chartsDir, "quarry"), ...AIO]);
  });

  test("one Deployment, the all-in-one image, every component; no service's Deployment, ServiceAccount or Service", () => {
    const docs = template("quarry", AIO);
    assert.deepEqual(kinds(docs, "Deployment"), [SA]);
    assert.deepEqual(kinds(docs, "ServiceAccount"), [SA, "quarry-helm-test"].sort());
    assert.deepEqual(kinds(docs, "Service"), [`${SA}-metrics`]);
    const spec = pod(docs);
    assert.equal(spec.serviceAccountName, SA);
    assert.equal(
      rbacOf("quarry").serviceAccountName,
      SA,
      "charts/quarry/rbac.yaml names the same ServiceAccount",
    );
    assert.equal(spec.containers[0]!.image, "ghcr.io/quarry-dev/all-in-one:0.1.0");
    assert.equal(spec.containers[0]!.name, "all-in-one");
    const e = env(docs);
    assert.equal(e.QUARRY_COMPONENTS, "lifecycle,run,cluster,git,bundle,pipe,http,hub");
    // the services' own env values hold in the one process
    assert.equal(e.QUARRY_GIT_CACHE_DIR, "/tmp/git-cache");
    assert.equal(e.QUARRY_RUN_FLAVOURS, "auto");
    assert.equal(e.ARTIFACT_HUB_API, "https://artifacthub.io/");
    // 32 workers for every controller: the resolvers share one, sized below a fleet git resolver's 128
    assert.equal(e.QUARRY_CONCURRENCY, "32");
    assert.equal(e.QUARRY_LEASE_OWNER_CONFIGMAP, "quarry-all-in-one-config");
    assert.ok(find(docs, "ConfigMap", "quarry-all-in-one-config"));
  });

  test("each service's rbac.yaml rules, bound to the one ServiceAccount; each service's ConfigMap", () => {
    const docs = template("quarry", AIO);
    for (const svc of [...services, "all-in-one"]) {
      const rbac = rbacOf(svc === "all-in-one" ? "quarry" : svc);
      const name = `quarry-${svc}`;
      if (rbac.clusterRules)
        assert.deepEqual(find(docs, "ClusterRole", name)?.rules, rbac.clusterRules, name);
      assert.deepEqual(find(docs, "Role", name)?.rules, rbac.namespaceRules, name);
      for (const kind of rbac.clusterRules ? ["ClusterRoleBinding", "RoleBinding"] : ["RoleBinding"])
        assert.deepEqual(
          find(docs, kind, name)?.subjects,
          [{ kind: "ServiceAccount", name: SA, namespace: "quarry-system" }],
          `${kind} ${name}`,
        );
    }
    // every ConfigMap a component reads is rendered (the fleet's set plus the Leases' owner)
    const fleet = kinds(template("quarry"), "ConfigMap");
    assert.deepEqual(kinds(docs, "ConfigMap"), [...fleet, "quarry-all-in-one-config"].sort());
    // the opt-in ClusterRoles stay unbound, for namespaces to bind to quarry-all-in-one
    for (const role of ["quarry-git-resolver-tokens", "quarry-pipe-resolver-namespace"]) {
      assert.ok(find(docs, "ClusterRole", role), role);
      assert.equal(find(docs, "ClusterRoleBinding", role), undefined, role);
    }
  });

  test("<service>.enabled=false: not a component, none of its RBAC, env or ConfigMap", () => {
    const docs = template("quarry", [
      ...AIO,
      "--set=hub-resolver.enabled=false",
      "--set=pipe-resolver.enabled=false",
    ]);
    // COMPONENT lists them in the order the process wires them, as the chart does
    const want = Object.entries(COMPONENT)
      .filter(([s]) => s !== "hub-resolver" && s !== "pipe-resolver")
      .map(([, c]) => c);
    assert.equal(env(docs).QUARRY_COMPONENTS, want.join(","));
    assert.equal(find(docs, "ClusterRole", "quarry-hub-resolver"), undefined);
    assert.equal(find(docs, "ConfigMap", "pipe-resolver-config"), undefined);
    assert.equal(env(docs).ARTIFACT_HUB_API, undefined);
  });

  test("allInOne values shape the Deployment: concurrency, replicas, image, extra env over a service's", () => {
    const docs = template("quarry", [
      ...AIO,
      "--set=allInOne.concurrency=16",
      "--set=allInOne.replicas=2",
      "--set=allInOne.leaderElection.buckets=4",
      "--set=allInOne.image.tag=9.9.9",
      "--set=allInOne.env.ARTIFACT_HUB_API=https://hub.example.com/",
      "--set=global.tektonConfigNamespace=tekton-pipelines-resolvers",
    ]);
    const e = env(docs);
    assert.equal(e.QUARRY_CONCURRENCY, "16");
    assert.equal(e.QUARRY_BUCKETS, "4");
    assert.equal(e.ARTIFACT_HUB_API, "https://hub.example.com/");
    assert.equal(e.QUARRY_TEKTON_CONFIG_NAMESPACE, "tekton-pipelines-resolvers");
    assert.equal(e.QUARRY_TEKTON_CACHE_CONFIG, "tekton-pipelines-resolvers/resolver-cache-config");
    assert.equal(
      (find(docs, "Deployment", SA) as unknown as { spec: { replicas: number } }).spec.replicas,
      2,
    );
    assert.equal(pod(docs).containers[0]!.image, "ghcr.io/quarry-dev/all-in-one:9.9.9");
    // the resolvers' Roles on Tekton's ConfigMaps are bound to the one ServiceAccount too
    const tekton = docs.filter((d) => d.kind === "RoleBinding" && d.metadata.name.endsWith("-tekton-config"));
    assert.ok(tekton.length > 0);
    for (const rb of tekton)
      assert.deepEqual(rb.subjects, [{ kind: "ServiceAccount", name: SA, namespace: "quarry-system" }]);
  });

  test("monitoring: one ServiceMonitor and one PrometheusRule, with the lifecycle controller's alert", () => {
    const docs = template("quarry", [...AIO, "--set=global.monitoring.skipCapabilitiesCheck=true"]);
    assert.deepEqual(kinds(docs, "ServiceMonitor"), [SA]);
    assert.deepEqual(kinds(docs, "PrometheusRule"), [SA]);
    const text = JSON.stringify(find(docs, "PrometheusRule", SA));
    assert.match(text, /QuarryBucketUnowned/);
    assert.match(text, /QuarryResolutionTimeouts/);
    assert.match(text, /job=\\"quarry-all-in-one-metrics\\"/);
    const off = template("quarry", [
      ...AIO,
      "--set=global.monitoring.skipCapabilitiesCheck=true",
      "--set=lifecycle-controller.enabled=false",
    ]);
    assert.doesNotMatch(JSON.stringify(find(off, "PrometheusRule", SA)), /QuarryResolutionTimeouts/);
  });

  test("refused: an unknown mode, no service enabled, the conversion webhook", () => {
    assert.throws(() => template("quarry", ["--set=global.mode=both"]), /mode/);
    assert.throws(
      () => template("quarry", [...AIO, ...services.map((s) => `--set=${s}.enabled=false`)]),
      /no service is enabled/,
    );
    assert.throws(
      () => template("quarry", [...AIO, "--set=lifecycle-controller.conversionWebhook.enabled=true"]),
      /conversionWebhook\.enabled needs global\.mode=fleet/,
    );
  });
});
