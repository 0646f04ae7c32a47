// helm lint of every chart and `helm template` of the value blocks, asserted on the parsed YAML
// (no cluster; charts-dry-run.test.ts sends the renders to a real apiserver).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { SERVICE_NODE_OPTIONS } from "@quarry/devcluster/service";
import { chartsDir, find, type Manifest, repoRoot, runHelm, services, template } from "@quarry/harness/helm";
import { leaderElectionFromEnv } from "@quarry/kube";
import { otlpTracesUrl } from "@quarry/observability";
import yaml from "js-yaml";

type Container = {
  env: { name: string; value?: string; valueFrom?: unknown }[];
  resources?: unknown;
  securityContext: Record<string, unknown>;
  livenessProbe: { httpGet: { path: string } };
  readinessProbe: { httpGet: { path: string } };
  image: string;
};
function podSpec(docs: Manifest[]): { containers: Container[]; securityContext: Record<string, unknown> } {
  const dep = find(docs, "Deployment") as unknown as { spec: { template: { spec: never } } };
  assert.ok(dep, "a Deployment");
  return dep.spec.template.spec;
}
function env(docs: Manifest[]): Record<string, string | undefined> {
  return Object.fromEntries(podSpec(docs).containers[0]!.env.map((e) => [e.name, e.value]));
}
const rbacOf = (svc: string) =>
  yaml.load(readFileSync(join(chartsDir, svc, "rbac.yaml"), "utf8")) as Record<string, unknown>;

test("helm lint passes for every chart", () => {
  for (const chart of ["quarry-lib", ...services, "quarry-crds", "quarry"]) {
    runHelm(["lint", "--strict", join(chartsDir, chart)]);
  }
});

describe("service charts", () => {
  for (const svc of services) {
    test(`${svc}: RBAC is rbac.yaml's rules, bound to its ServiceAccount`, () => {
      const docs = template(svc);
      const rbac = rbacOf(svc);
      const sa = rbac.serviceAccountName as string;
      assert.ok(find(docs, "ServiceAccount", sa));
      assert.deepEqual(find(docs, "ClusterRole", `quarry-${svc}`)?.rules, rbac.clusterRules);
      assert.deepEqual(find(docs, "Role", `quarry-${svc}`)?.rules, rbac.namespaceRules);
      for (const kind of ["ClusterRoleBinding", "RoleBinding"]) {
        assert.deepEqual(find(docs, kind, `quarry-${svc}`)?.subjects, [
          { kind: "ServiceAccount", name: sa, namespace: "quarry-system" },
        ]);
      }
      assert.equal((podSpec(docs) as unknown as { serviceAccountName: string }).serviceAccountName, sa);
      // the ConfigMap the chart writes is the one the Role lets the service read
      const cm = find(docs, "ConfigMap")!.metadata.name;
      const rules = rbac.namespaceRules as { resources: string[]; resourceNames?: string[] }[];
      assert.ok(
        rules.some((r) => r.resources.includes("configmaps") && r.resourceNames?.includes(cm)),
        cm,
      );
      // every opt-in rule set (tokenRules, credentialRules, pipeNamespaceRules) is an unbound ClusterRole
      const optIn = Object.keys(rbac).filter(
        // conversionWebhook*Rules are bound by the chart with the webhook (conversion-webhook.test.ts)
        (k) =>
          k.endsWith("Rules") && !/^(cluster|namespace)Rules$/.test(k) && !k.startsWith("conversionWebhook"),
      );
      const roles = docs.filter((d) => d.kind === "ClusterRole" && d.metadata.name !== `quarry-${svc}`);
      assert.deepEqual(
        roles.map((r) => r.rules),
        optIn.map((k) => rbac[k]),
      );
    });

    test(`${svc}: restricted securityContext, probes, downward-API env, image tag from appVersion`, () => {
      const pod = podSpec(template(svc));
      assert.deepEqual(pod.securityContext, {
        runAsNonRoot: true,
        runAsUser: 65532,
        runAsGroup: 65532,
        fsGroup: 65532,
        seccompProfile: { type: "RuntimeDefault" },
      });
      const c = pod.containers[0]!;
      assert.deepEqual(c.securityContext, {
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        runAsUser: 65532,
        capabilities: { drop: ["ALL"] },
        seccompProfile: { type: "RuntimeDefault" },
      });
      assert.equal(c.livenessProbe.httpGet.path, "/healthz");
      assert.equal(c.readinessProbe.httpGet.path, "/readyz");
      assert.match(c.image, new RegExp(`/${svc}:0\\.1\\.0$`));
      const byName = Object.fromEntries(c.env.map((e) => [e.name, e.valueFrom]));
      assert.deepEqual(byName.POD_NAME, { fieldRef: { fieldPath: "metadata.name" } });
      assert.deepEqual(byName.QUARRY_SYSTEM_NAMESPACE, { fieldRef: { fieldPath: "metadata.namespace" } });
      assert.deepEqual(byName.QUARRY_SERVICE_ACCOUNT, { fieldRef: { fieldPath: "spec.serviceAccountName" } });
      // the processes tests and benchmarks start are run with the same V8 options
      const values = Object.fromEntries(c.env.map((e) => [e.name, e.value]));
      assert.equal(values.NODE_OPTIONS, SERVICE_NODE_OPTIONS);
      const off = podSpec(template(svc, ["--set", "nodeOptions="])).containers[0]!;
      assert.equal(
        off.env.some((e) => e.name === "NODE_OPTIONS"),
        false,
        "an empty nodeOptions sets no NODE_OPTIONS",
      );
    });
  }
});

describe("value blocks (lifecycle-controller)", () => {
  const svc = "lifecycle-controller";

  test("defaults: one replica, active/standby leader election with client-go's timings", () => {
    const docs = template(svc);
    assert.equal((find(docs, "Deployment") as unknown as { spec: { replicas: number } }).spec.replicas, 1);
    const e = env(docs);
    assert.equal(e.QUARRY_LEADER_ELECTION, "on");
    assert.equal(e.QUARRY_BUCKETS, "1");
    assert.equal(e.QUARRY_LEASE_DURATION, "15s");
    assert.equal(e.QUARRY_LEASE_RENEW_DEADLINE, "10s");
    assert.equal(e.QUARRY_LEASE_RETRY_PERIOD, "2s");
    assert.equal(e.QUARRY_WATCH_NAMESPACE, undefined);
    assert.equal(e.QUARRY_LEASE_OWNER_CONFIGMAP, `${svc}-config`, "the ConfigMap the chart renders");
    assert.ok(find(docs, "ConfigMap", `${svc}-config`));
    for (const kind of ["PodDisruptionBudget", "HorizontalPodAutoscaler", "NetworkPolicy"]) {
      assert.equal(find(docs, kind), undefined, `no ${kind} by default`);
    }
  });

  test("replicas, resources, leaderElection, image, extraEnv, watchNamespace", () => {
    const docs = template(svc, [
      "--set=replicas=3",
      "--set=resources.limits.cpu=2",
      "--set=leaderElection.buckets=6",
      "--set=leaderElection.leaseDuration=4s",
      "--set=leaderElection.renewDeadline=3s",
      "--set=leaderElection.retryPeriod=500ms",
      "--set=image.registry=registry.local,image.repository=lc,image.tag=dev",
      "--set=extraEnv[0].name=QUARRY_V",
      "--set-string=extraEnv[0].value=1",
      "--set=watchNamespace=ci",
    ]);
    const dep = find(docs, "Deployment") as unknown as { spec: { replicas: number } };
    assert.equal(dep.spec.replicas, 3);
    const c = podSpec(docs).containers[0]!;
    assert.equal(c.image, "registry.local/lc:dev");
    assert.deepEqual(c.resources, {
      requests: { cpu: "50m", memory: "128Mi" },
      limits: { cpu: 2, memory: "512Mi" },
    });
    const e = env(docs);
    assert.deepEqual(
      [e.QUARRY_BUCKETS, e.QUARRY_LEASE_DURATION, e.QUARRY_LEASE_RENEW_DEADLINE, e.QUARRY_LEASE_RETRY_PERIOD],
      ["6", "4s", "3s", "500ms"],
    );
    // the runtime's own parser reads what the chart wrote (no drift between value names and env)
    const parsed = leaderElectionFromEnv({ ...e, POD_NAME: "p-0" });
    assert.deepEqual(parsed, {
      enabled: true,
      buckets: 6,
      identity: "p-0",
      timing: { leaseDurationMs: 4000, renewDeadlineMs: 3000, retryPeriodMs: 500 },
      // the service's own ConfigMap owns its bucket Leases (uninstall collects them)
      ownerConfigMap: `${svc}-config`,
    });
    assert.equal(e.QUARRY_V, "1");
    assert.equal(e.QUARRY_WATCH_NAMESPACE, "ci");
    assert.equal(env(template(svc, ["--set=leaderElection.enabled=false"])).QUARRY_LEADER_ELECTION, "off");
  });

  test("config map: values config → <service>-config, strings", () => {
    const docs = template(svc, ["--set=config.default-timeout=2m", "--set-string=config.max-attempts=5"]);
    assert.deepEqual(find(docs, "ConfigMap")?.data, {
      "default-timeout": "2m",
      "max-attempts": "5",
    });
    assert.deepEqual(find(template(svc), "ConfigMap", `${svc}-config`)?.data, {});
  });

  test("secretReads: get on exactly the named Secrets in their namespace, nothing by default", () => {
    const rbacKinds = (docs: ReturnType<typeof template>) =>
      docs.filter((d) => d.metadata?.name?.includes("secret-reads")).map((d) => d.kind);
    assert.deepEqual(rbacKinds(template("git-resolver")), [], "no grant unless asked");
    const docs = template("git-resolver", [
      "--set=secretReads[0].namespace=tekton-pipelines-resolvers",
      "--set=secretReads[0].secrets[0]=github-api-token",
    ]);
    const role = find(docs, "Role", "quarry-git-resolver-secret-reads-0") as unknown as {
      metadata: { namespace: string };
      rules: unknown[];
    };
    assert.equal(role.metadata.namespace, "tekton-pipelines-resolvers");
    assert.deepEqual(role.rules, [
      { apiGroups: [""], resources: ["secrets"], resourceNames: ["github-api-token"], verbs: ["get"] },
    ]);
    const binding = find(docs, "RoleBinding", "quarry-git-resolver-secret-reads-0") as unknown as {
      metadata: { namespace: string };
      subjects: { name: string }[];
    };
    assert.equal(binding.metadata.namespace, "tekton-pipelines-resolvers");
    assert.deepEqual(
      binding.subjects.map((s) => s.name),
      ["quarry-git-resolver"],
    );
  });

  test("tektonConfigNamespace: Tekton's ConfigMap of the same name and its resolver-cache-config read in place, a Role there reading only those", () => {
    const tektonReads = (docs: ReturnType<typeof template>) =>
      docs.filter((d) => d.metadata?.name?.endsWith("-tekton-config")).map((d) => d.kind);
    assert.deepEqual(tektonReads(template("git-resolver")), [], "nothing read unless asked");
    const TEKTON = "tekton-pipelines-resolvers";
    const served = {
      "git-resolver": "git-resolver-config",
      "bundle-resolver": "bundleresolver-config",
      "cluster-resolver": "cluster-resolver-config",
      "http-resolver": "http-resolver-config",
      "hub-resolver": "hubresolver-config",
    };
    for (const [chart, configMap] of Object.entries(served)) {
      // the umbrella's global value reaches every resolver Tekton also ships
      const docs = template(chart, [`--set=global.tektonConfigNamespace=${TEKTON}`]);
      const e = env(docs);
      assert.equal(e.QUARRY_TEKTON_CONFIG_NAMESPACE, TEKTON, chart);
      assert.equal(e.QUARRY_TEKTON_CACHE_CONFIG, `${TEKTON}/resolver-cache-config`, chart);
      const role = find(docs, "Role", `quarry-${chart}-tekton-config`) as unknown as {
        metadata: { namespace: string };
        rules: unknown[];
      };
      assert.equal(role.metadata.namespace, TEKTON);
      assert.deepEqual(role.rules, [
        {
          apiGroups: [""],
          resources: ["configmaps"],
          resourceNames: [configMap, "resolver-cache-config"],
          verbs: ["get", "list", "watch"],
        },
      ]);
      const binding = find(docs, "RoleBinding", `quarry-${chart}-tekton-config`) as unknown as {
        metadata: { namespace: string };
        subjects: { name: string; namespace: string }[];
      };
      assert.equal(binding.metadata.namespace, TEKTON);
      assert.deepEqual(binding.subjects, [
        { kind: "ServiceAccount", name: `quarry-${chart}`, namespace: "quarry-system" },
      ]);
    }
    // a service Tekton does not ship reads nothing of Tekton's
    for (const chart of ["pipe-resolver", "lifecycle-controller", "run-controller"]) {
      const docs = template(chart, [`--set=global.tektonConfigNamespace=${TEKTON}`]);
      assert.deepEqual(tektonReads(docs), [], chart);
      assert.equal(env(docs).QUARRY_TEKTON_CONFIG_NAMESPACE, undefined, chart);
    }
    // the cache config alone, from elsewhere: its own Role there, nothing else of Tekton's read
    const cacheOnly = template("bundle-resolver", ["--set=tektonCacheConfig=tekton-cfg/my-cache"]);
    assert.equal(env(cacheOnly).QUARRY_TEKTON_CONFIG_NAMESPACE, undefined);
    assert.equal(env(cacheOnly).QUARRY_TEKTON_CACHE_CONFIG, "tekton-cfg/my-cache");
    const cacheRole = find(cacheOnly, "Role", "quarry-bundle-resolver-tekton-config") as unknown as {
      metadata: { namespace: string };
      rules: { resourceNames: string[] }[];
    };
    assert.equal(cacheRole.metadata.namespace, "tekton-cfg");
    assert.deepEqual(cacheRole.rules[0]?.resourceNames, ["my-cache"]);
  });

  test("PDB, HPA (replicas then left to it), NetworkPolicy toggles", () => {
    const docs = template(svc, [
      "--set=podDisruptionBudget.enabled=true",
      "--set=autoscaling.enabled=true,autoscaling.maxReplicas=5",
      "--set=networkPolicy.enabled=true",
    ]);
    assert.equal((find(docs, "PodDisruptionBudget")!.spec as { maxUnavailable: number }).maxUnavailable, 1);
    assert.equal((find(docs, "HorizontalPodAutoscaler")!.spec as { maxReplicas: number }).maxReplicas, 5);
    assert.equal((find(docs, "Deployment")!.spec as { replicas?: number }).replicas, undefined);
    assert.ok(find(docs, "NetworkPolicy"));
  });

  test("ServiceMonitor and PrometheusRule only when the Prometheus Operator's API is served", () => {
    assert.equal(find(template(svc), "ServiceMonitor"), undefined);
    const api = [
      "--api-versions=monitoring.coreos.com/v1/ServiceMonitor",
      "--api-versions=monitoring.coreos.com/v1/PrometheusRule",
    ];
    const docs = template(svc, api);
    assert.ok(find(docs, "ServiceMonitor", `quarry-${svc}`));
    assert.ok(find(docs, "PrometheusRule", `quarry-${svc}`));
    assert.equal(
      find(template(svc, [...api, "--set=serviceMonitor.enabled=false"]), "ServiceMonitor"),
      undefined,
    );
  });
});

describe("egress values (resolvers that fetch from the network)", () => {
  const CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  // the keys each chart's config ships with (Tekton's shipped values)
  const shipped: Record<string, Record<string, string>> = {
    "git-resolver": { "fetch-timeout": "1m" },
    "bundle-resolver": {},
  };
  for (const [svc, base] of Object.entries(shipped)) {
    test(`${svc}: egress → the ConfigMap's ca-bundle, proxy, no-proxy; config wins; unset adds nothing`, () => {
      const cm = (args: string[]) => find(template(svc, args), "ConfigMap")?.data;
      assert.deepEqual(
        cm([
          `--set-string=egress.caBundle=${CA}`,
          "--set=egress.proxy=http://proxy.corp:3128",
          String.raw`--set=egress.noProxy=.svc\,10.0.0.0/8`,
        ]),
        { ...base, "ca-bundle": CA, proxy: "http://proxy.corp:3128", "no-proxy": ".svc,10.0.0.0/8" },
      );
      assert.deepEqual(cm(["--set=egress.proxy=http://a:1", "--set=config.proxy=http://b:2"]), {
        ...base,
        proxy: "http://b:2",
      });
      assert.deepEqual(cm([]), base);
    });
  }
});

describe("tracing values", () => {
  const otelEnv = (docs: Manifest[]) =>
    Object.fromEntries(Object.entries(env(docs)).filter(([k]) => k.startsWith("OTEL_")));

  test("no endpoint (default): no OTEL_* env in any service", () => {
    for (const svc of services) assert.deepEqual(otelEnv(template(svc)), {}, svc);
    assert.deepEqual(
      otelEnv(template("cluster-resolver", ["--set=tracing.sampler=always_off"])),
      {},
      "a sampler alone exports nothing",
    );
  });

  for (const svc of services) {
    test(`${svc}: tracing.* → OTEL_* env the service reads`, () => {
      const e = otelEnv(
        template(svc, [
          "--set=tracing.otlpEndpoint=http://otel-collector.obs:4318",
          "--set=tracing.headers=authorization=Bearer%20abc",
          "--set=tracing.sampler=parentbased_traceidratio",
          "--set-string=tracing.samplerArg=0.1",
        ]),
      );
      assert.deepEqual(e, {
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel-collector.obs:4318",
        OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20abc",
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.1",
        OTEL_RESOURCE_ATTRIBUTES: "k8s.pod.name=$(POD_NAME),k8s.namespace.name=$(QUARRY_SYSTEM_NAMESPACE)",
      });
      // the service's own reading of the variables
      assert.equal(otlpTracesUrl(e), "http://otel-collector.obs:4318/v1/traces");
    });
  }

  test("umbrella: global.tracing reaches every service; a service's own value wins", () => {
    const docs = template("quarry", [
      "--set=global.tracing.otlpEndpoint=http://global:4318",
      "--set=global.tracing.sampler=always_on",
      "--set=git-resolver.tracing.otlpEndpoint=http://own:4318",
    ]);
    for (const svc of services) {
      const e = otelEnv(docs.filter((d) => d.metadata.name === `quarry-${svc}`));
      const endpoint = svc === "git-resolver" ? "http://own:4318" : "http://global:4318";
      assert.equal(e.OTEL_EXPORTER_OTLP_ENDPOINT, endpoint, svc);
      assert.equal(e.OTEL_TRACES_SAMPLER, "always_on", svc);
    }
  });
});

describe("the shard label", () => {
  const kinds = (docs: Manifest[]) =>
    docs
      .filter((d) => d.metadata.name.startsWith("quarry-resolutionrequest-shard"))
      .map((d) => `${d.apiVersion} ${d.kind}`);

  test("off by default; global.shardLabel renders both policies and turns every service's switch on", () => {
    assert.deepEqual(kinds(template("quarry-crds")), []);
    for (const svc of services) assert.equal(env(template(svc)).QUARRY_SHARD_LABEL, "off", svc);
    assert.deepEqual(kinds(template("quarry-crds", ["--set=global.shardLabel=true"])), [
      "admissionregistration.k8s.io/v1beta1 MutatingAdmissionPolicy",
      "admissionregistration.k8s.io/v1beta1 MutatingAdmissionPolicyBinding",
      "admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy",
      "admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding",
    ]);
    const umbrella = template("quarry", ["--set=global.shardLabel=true"]);
    assert.equal(kinds(umbrella).length, 4);
    const switches = umbrella.filter((d) => d.kind === "Deployment").map((d) => env([d]).QUARRY_SHARD_LABEL);
    assert.ok(switches.length >= 8 && switches.every((v) => v === "on"), switches.join(","));
  });

  test("each side on its own; the v1 API where the cluster serves it", () => {
    assert.equal(kinds(template("quarry-crds", ["--set=admissionPolicies.shardLabel=true"])).length, 4);
    assert.equal(
      env(template("git-resolver", ["--set=leaderElection.shardLabel=true"])).QUARRY_SHARD_LABEL,
      "on",
    );
    const v1 = template("quarry-crds", [
      "--set=admissionPolicies.shardLabel=true",
      "--api-versions=admissionregistration.k8s.io/v1/MutatingAdmissionPolicy",
    ]);
    assert.deepEqual(kinds(v1).slice(0, 2), [
      "admissionregistration.k8s.io/v1 MutatingAdmissionPolicy",
      "admissionregistration.k8s.io/v1 MutatingAdmissionPolicyBinding",
    ]);
  });
});

describe("quarry-crds and the umbrella", () => {
  const crdNames = (docs: Manifest[]) =>
    docs
      .filter((d) => d.kind === "CustomResourceDefinition")
      .map((d) => d.metadata.name)
      .sort();

  test("every CRD from libs/api, kept on uninstall; Tekton's skippable; each toggled", () => {
    const docs = template("quarry-crds");
    assert.deepEqual(crdNames(docs), [
      "clusterpipestrategies.quarry.dev",
      "customruns.tekton.dev",
      "pipes.quarry.dev",
      "pipestrategies.quarry.dev",
      "resolutionrequests.resolution.tekton.dev",
      "runs.tekton.dev",
    ]);
    for (const d of docs.filter((d) => d.kind === "CustomResourceDefinition")) {
      assert.equal(d.metadata.annotations?.["helm.sh/resource-policy"], "keep");
    }
    assert.ok(find(docs, "ValidatingAdmissionPolicy", "quarry-resolutionrequest-resolver-label"));
    assert.deepEqual(crdNames(template("quarry-crds", ["--set=tektonPipelinesInstalled=true"])), [
      "clusterpipestrategies.quarry.dev",
      "pipes.quarry.dev",
      "pipestrategies.quarry.dev",
    ]);
    assert.equal(
      crdNames(template("quarry-crds", ["--set=crds.pipes.enabled=false"])).includes("pipes.quarry.dev"),
      false,
    );
  });

  test("umbrella: every service and the CRDs; <service>.enabled turns one off", () => {
    const deployments = (docs: Manifest[]) =>
      docs
        .filter((d) => d.kind === "Deployment")
        .map((d) => d.metadata.name)
        .sort();
    const docs = template("quarry");
    assert.deepEqual(deployments(docs), services.map((s) => `quarry-${s}`).sort());
    assert.equal(crdNames(docs).length, 6);
    const off = template("quarry", ["--set=git-resolver.enabled=false", "--set=crds.enabled=false"]);
    assert.equal(deployments(off).includes("quarry-git-resolver"), false);
    assert.equal(crdNames(off).length, 0);
    assert.equal(
      env(
        template("quarry", ["--set=lifecycle-controller.leaderElection.buckets=4"]).filter((d) =>
          d.metadata.name.startsWith("quarry-lifecycle"),
        ),
      ).QUARRY_BUCKETS,
      "4",
    );
  });
});

test("deploy/ is the default render (scripts/render-deploy.sh --check)", () => {
  execFileSync("bash", [join(repoRoot, "scripts", "render-deploy.sh"), "--check"], { stdio: "pipe" });
});
