// The values operators expect of a chart (argo-cd's and kube-prometheus-stack's conventions):
// images by registry, tag or digest with pull Secrets; overridable security contexts whose fixed
// ids can be dropped; scheduling and pod metadata; offline rendering of the monitoring objects;
// alerts with runbooks; a values schema that refuses wrong values; kubeVersion; the `helm test`
// hook. Each on every service chart where it applies, asserted on `helm template`.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { metricNames } from "@quarry/dashboard/promql";
import { chartsDir, find, type Manifest, repoRoot, services, template } from "@quarry/harness/helm";
import yaml from "js-yaml";
import { exportedMetrics } from "./exported-metrics.ts";

type Json = Record<string, unknown>;
interface PodSpec {
  containers: { image: string; securityContext?: Json; volumeMounts: Json[] }[];
  securityContext?: Json;
  imagePullSecrets?: { name: string }[];
  priorityClassName?: string;
  topologySpreadConstraints?: Json[];
  volumes: Json[];
}
const deployment = (docs: Manifest[]) =>
  find(docs, "Deployment") as unknown as {
    spec: { template: { metadata: { labels: Record<string, string> }; spec: PodSpec } };
  };
const pod = (docs: Manifest[]) => deployment(docs).spec.template.spec;
const image = (svc: string, args: string[] = []) => pod(template(svc, args)).containers[0]!.image;
const DIGEST = `sha256:${"0123456789abcdef".repeat(4)}`;
/** Every chart that has values (quarry-lib is a library: none). */
const charts = [...services, "quarry-crds", "quarry"];
const MONITORING = [
  "--api-versions=monitoring.coreos.com/v1/ServiceMonitor",
  "--api-versions=monitoring.coreos.com/v1/PrometheusRule",
];

describe("images", () => {
  test("default: ghcr.io/quarry-dev/<service>:<appVersion>, for every service", () => {
    for (const svc of services) assert.equal(image(svc), `ghcr.io/quarry-dev/${svc}:0.1.0`, svc);
  });

  test("global.image.registry and tag; a service's own registry and tag win", () => {
    const g = ["--set=global.image.registry=mirror.example.com/quarry", "--set=global.image.tag=1.2.3"];
    assert.equal(image("git-resolver", g), "mirror.example.com/quarry/quarry-dev/git-resolver:1.2.3");
    assert.equal(
      image("git-resolver", [...g, "--set=image.registry=other.example.com", "--set=image.tag=9"]),
      "other.example.com/quarry-dev/git-resolver:9",
    );
    // no registry at all: the repository is the whole name
    assert.equal(
      image("git-resolver", ["--set=global.image.registry=", "--set=image.repository=quarry.local/git"]),
      "quarry.local/git:0.1.0",
    );
  });

  test("image.digest: <registry>/<repository>@<digest>, the tag left out; a malformed digest fails", () => {
    assert.equal(
      image("bundle-resolver", [`--set=image.digest=${DIGEST}`, "--set=image.tag=ignored"]),
      `ghcr.io/quarry-dev/bundle-resolver@${DIGEST}`,
    );
    assert.throws(() => template("bundle-resolver", ["--set=image.digest=sha256:abc"]), /image\.digest/);
  });

  test("umbrella: global.image reaches every service; one service pinned by digest", () => {
    const docs = template("quarry", [
      "--set=global.image.registry=registry.example.com",
      "--set=global.image.tag=2.0.0",
      `--set=git-resolver.image.digest=${DIGEST}`,
    ]);
    for (const svc of services) {
      const dep = docs.find((d) => d.kind === "Deployment" && d.metadata.name === `quarry-${svc}`)!;
      const want =
        svc === "git-resolver"
          ? `registry.example.com/quarry-dev/git-resolver@${DIGEST}`
          : `registry.example.com/quarry-dev/${svc}:2.0.0`;
      assert.equal(pod([dep]).containers[0]!.image, want, svc);
    }
  });

  test("imagePullSecrets: global's then the service's, as {name}, duplicates once; none by default", () => {
    assert.equal(pod(template("hub-resolver")).imagePullSecrets, undefined);
    const spec = pod(
      template("hub-resolver", [
        "--set=global.imagePullSecrets[0].name=regcred",
        "--set=imagePullSecrets[0]=own",
        "--set=imagePullSecrets[1].name=regcred",
      ]),
    );
    assert.deepEqual(spec.imagePullSecrets, [{ name: "regcred" }, { name: "own" }]);
  });
});

describe("security contexts", () => {
  test("defaults are the restricted contexts (every service)", () => {
    for (const svc of services) {
      const spec = pod(template(svc));
      assert.equal(spec.securityContext?.runAsUser, 65532, svc);
      assert.equal(spec.containers[0]!.securityContext?.readOnlyRootFilesystem, true, svc);
    }
  });

  test("OpenShift: the fixed ids set to null are left out; the rest stays", () => {
    const spec = pod(
      template("cluster-resolver", [
        "--set=podSecurityContext.runAsUser=null",
        "--set=podSecurityContext.runAsGroup=null",
        "--set=podSecurityContext.fsGroup=null",
        "--set=securityContext.runAsUser=null",
      ]),
    );
    assert.deepEqual(spec.securityContext, {
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
    assert.deepEqual(spec.containers[0]!.securityContext, {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    });
  });

  test("overridable: another key added, a default changed", () => {
    const spec = pod(
      template("pipe-resolver", [
        "--set=podSecurityContext.supplementalGroups[0]=4000",
        "--set=securityContext.runAsUser=1001",
      ]),
    );
    assert.deepEqual(spec.securityContext?.supplementalGroups, [4000]);
    assert.equal(spec.containers[0]!.securityContext?.runAsUser, 1001);
  });
});

describe("scheduling and pod metadata, on every service", () => {
  for (const svc of services) {
    test(`${svc}: priorityClassName, topologySpreadConstraints, podLabels, podAnnotations, extraVolumes/Mounts`, () => {
      const docs = template(svc, [
        "--set=priorityClassName=quarry-critical",
        "--set=topologySpreadConstraints[0].maxSkew=1",
        "--set=topologySpreadConstraints[0].topologyKey=topology.kubernetes.io/zone",
        "--set=topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway",
        "--set=podLabels.team=ci",
        "--set=podAnnotations.note=x",
        "--set=extraVolumes[0].name=certs",
        "--set=extraVolumes[0].secret.secretName=corp-ca",
        "--set=extraVolumeMounts[0].name=certs",
        "--set=extraVolumeMounts[0].mountPath=/etc/corp-ca",
      ]);
      const tpl = deployment(docs).spec.template;
      const spec = tpl.spec;
      assert.equal(spec.priorityClassName, "quarry-critical");
      // without a labelSelector, the constraint spreads this service's own pods
      assert.deepEqual(spec.topologySpreadConstraints, [
        {
          maxSkew: 1,
          topologyKey: "topology.kubernetes.io/zone",
          whenUnsatisfiable: "ScheduleAnyway",
          labelSelector: {
            matchLabels: { "app.kubernetes.io/name": svc, "app.kubernetes.io/instance": "quarry" },
          },
        },
      ]);
      assert.equal(tpl.metadata.labels.team, "ci");
      assert.equal((tpl.metadata as { annotations?: Record<string, string> }).annotations?.note, "x");
      assert.deepEqual(spec.volumes.at(-1), { name: "certs", secret: { secretName: "corp-ca" } });
      assert.deepEqual(spec.containers[0]!.volumeMounts.at(-1), { name: "certs", mountPath: "/etc/corp-ca" });
      const plain = pod(template(svc));
      assert.equal(plain.priorityClassName, undefined);
      assert.equal(plain.topologySpreadConstraints, undefined);
    });
  }

  test("lifecycle-controller: the conversion webhook's volume comes before the operator's", () => {
    const spec = pod(
      template("lifecycle-controller", [
        "--set=conversionWebhook.enabled=true,conversionWebhook.certManager.enabled=true",
        "--set=extraVolumes[0].name=certs,extraVolumes[0].emptyDir.medium=Memory",
        "--set=extraVolumeMounts[0].name=certs,extraVolumeMounts[0].mountPath=/certs",
      ]),
    );
    assert.deepEqual(
      spec.volumes.map((v) => v.name),
      ["tmp", "webhook-tls", "certs"],
    );
    assert.deepEqual(
      spec.containers[0]!.volumeMounts.map((v) => v.name),
      ["tmp", "webhook-tls", "certs"],
    );
  });
});

describe("monitoring", () => {
  interface Rule {
    alert: string;
    expr: string;
    for?: string;
    labels?: Record<string, string>;
    annotations: Record<string, string>;
  }
  const rules = (docs: Manifest[]) =>
    (
      find(docs, "PrometheusRule") as unknown as { spec: { groups: { rules: Rule[] }[] } } | undefined
    )?.spec.groups.flatMap((g) => g.rules) ?? [];

  test("global.monitoring.skipCapabilitiesCheck renders ServiceMonitor and PrometheusRule offline; enabled=false still wins", () => {
    const skip = ["--set=global.monitoring.skipCapabilitiesCheck=true"];
    for (const svc of services) {
      const docs = template(svc, skip);
      assert.ok(find(docs, "ServiceMonitor", `quarry-${svc}`), svc);
      assert.ok(find(docs, "PrometheusRule", `quarry-${svc}`), svc);
    }
    const off = template("git-resolver", [
      ...skip,
      "--set=serviceMonitor.enabled=false,prometheusRule.enabled=false",
    ]);
    assert.equal(find(off, "ServiceMonitor"), undefined);
    assert.equal(find(off, "PrometheusRule"), undefined);
    const umbrella = template("quarry", skip);
    assert.equal(umbrella.filter((d) => d.kind === "ServiceMonitor").length, services.length);
  });

  test("every alert has a runbook_url into docs/troubleshooting.md, by the alert's lower-cased name", () => {
    const names = new Set<string>();
    for (const svc of services) {
      for (const r of rules(template(svc, MONITORING))) {
        names.add(r.alert);
        assert.equal(
          r.annotations.runbook_url,
          `https://github.com/quarry-dev/quarry/blob/main/docs/troubleshooting.md#${r.alert.toLowerCase()}`,
          `${svc} ${r.alert}`,
        );
        assert.ok(r.annotations.summary, `${svc} ${r.alert}: a summary`);
      }
    }
    assert.deepEqual([...names].sort(), ["QuarryBucketUnowned", "QuarryResolutionTimeouts"]);
    const moved = rules(
      template("git-resolver", [
        ...MONITORING,
        "--set=global.monitoring.runbookBaseUrl=https://wiki.corp/quarry#",
      ]),
    );
    assert.equal(moved[0]?.annotations.runbook_url, "https://wiki.corp/quarry#quarrybucketunowned");
  });

  test("QuarryResolutionTimeouts: the lifecycle controller's only, on its timed-out counter, tunable", () => {
    const timeouts = (args: string[] = []) =>
      rules(template("lifecycle-controller", [...MONITORING, ...args])).find(
        (r) => r.alert === "QuarryResolutionTimeouts",
      );
    const r = timeouts()!;
    assert.equal(
      r.expr,
      'sum by (type) (increase(quarry_resolution_requests_timed_out_total{job="quarry-lifecycle-controller-metrics"}[10m])) > 0',
    );
    assert.equal(r.for, "5m");
    assert.equal(r.labels?.severity, "warning");
    const tuned = timeouts([
      "--set=prometheusRule.resolutionTimeouts.window=30m",
      "--set=prometheusRule.resolutionTimeouts.threshold=5",
      "--set=prometheusRule.resolutionTimeouts.for=15m",
      "--set=prometheusRule.resolutionTimeouts.severity=critical",
    ])!;
    assert.match(tuned.expr, /\[30m\]\)\) > 5$/);
    assert.equal(tuned.for, "15m");
    assert.equal(tuned.labels?.severity, "critical");
    assert.equal(timeouts(["--set=prometheusRule.resolutionTimeouts.enabled=false"]), undefined);
    for (const svc of services.filter((s) => s !== "lifecycle-controller")) {
      assert.ok(!rules(template(svc, MONITORING)).some((x) => x.alert === "QuarryResolutionTimeouts"), svc);
    }
  });

  test("every alert expression reads only metrics the services export", async () => {
    const exported = (await exportedMetrics()).metrics;
    const missing: string[] = [];
    for (const svc of services)
      for (const r of rules(template(svc, MONITORING)))
        for (const m of metricNames(r.expr)) if (!exported.has(m)) missing.push(`${svc} ${r.alert}: ${m}`);
    assert.deepEqual(missing, []);
  });
});

describe("values.schema.json", () => {
  test("generated from scripts/gen-chart-schemas.ts (--check)", () => {
    execFileSync(process.execPath, [join(repoRoot, "scripts", "gen-chart-schemas.ts"), "--check"], {
      stdio: "pipe",
    });
  });

  /** Dotted key paths of values, descending where the schema lists properties (free-form maps stop). */
  function paths(values: unknown, schema: Json, prefix = ""): { inValues: string[]; inSchema: string[] } {
    const props = schema.properties as Record<string, Json> | undefined;
    if (!props || typeof values !== "object" || values === null || Array.isArray(values))
      return { inValues: [], inSchema: [] };
    const inValues: string[] = [];
    const inSchema: string[] = [];
    for (const key of Object.keys(values)) {
      const p = `${prefix}${key}`;
      if (!(key in props)) inValues.push(p);
      else {
        const sub = paths((values as Json)[key], props[key]!, `${p}.`);
        inValues.push(...sub.inValues);
        inSchema.push(...sub.inSchema);
      }
    }
    for (const key of Object.keys(props)) if (!(key in (values as Json))) inSchema.push(`${prefix}${key}`);
    return { inValues, inSchema };
  }

  for (const chart of charts) {
    test(`${chart}: every values.yaml key is in the schema, and every schema key in values.yaml`, () => {
      const values = yaml.load(readFileSync(join(chartsDir, chart, "values.yaml"), "utf8"));
      const schema = JSON.parse(readFileSync(join(chartsDir, chart, "values.schema.json"), "utf8")) as Json;
      const { inValues, inSchema } = paths(values, schema);
      assert.deepEqual(inValues, [], "in values.yaml, not in the schema");
      // set by helm or the umbrella, never in a chart's own values.yaml (quarry-crds reads no global)
      const notValues = new Set(["enabled", "quarry-lib", ...(chart === "quarry-crds" ? ["global"] : [])]);
      assert.deepEqual(
        inSchema.filter((p) => !notValues.has(p)),
        [],
        "in the schema, not in values.yaml",
      );
    });
  }

  test("every service chart's global: is the umbrella's (a service chart installed alone defaults alike)", () => {
    const globalOf = (chart: string) =>
      (yaml.load(readFileSync(join(chartsDir, chart, "values.yaml"), "utf8")) as { global?: unknown }).global;
    for (const svc of services) assert.deepEqual(globalOf(svc), globalOf("quarry"), svc);
  });

  const refused: [string, string[], RegExp][] = [
    ["git-resolver", ["--set=replicas=two"], /replicas: Invalid type\. Expected: integer, given: string/],
    [
      "git-resolver",
      ["--set=leaderElection.buckets=-1"],
      /leaderElection\.buckets: Must be greater than or equal to 1/,
    ],
    ["lifecycle-controller", ["--set=leaderElection.leaseDuration=15"], /leaderElection\.leaseDuration/],
    ["bundle-resolver", ["--set=image.pullPolicy=Sometimes"], /image\.pullPolicy/],
    ["http-resolver", ["--set=image.digest=latest"], /image\.digest/],
    ["hub-resolver", ["--set=replica=2"], /Additional property replica is not allowed/],
    ["quarry-crds", ["--set=admissionPolicies.enabled=yes please"], /admissionPolicies\.enabled/],
    ["quarry", ["--set=git-resolver.concurrency=lots"], /concurrency: Invalid type/],
    ["quarry", ["--set=global.monitoring.skipCapabilitiesCheck=maybe"], /skipCapabilitiesCheck/],
  ];
  for (const [chart, args, message] of refused) {
    test(`${chart}: helm refuses ${args.join(" ")}`, () => {
      assert.throws(
        () => template(chart, args),
        (err: Error & { stderr?: string }) => {
          assert.match(String(err.stderr ?? err.message), message);
          return true;
        },
      );
    });
  }
});

test("kubeVersion in every Chart.yaml: what ValidatingAdmissionPolicy v1 needs", () => {
  for (const chart of ["quarry-lib", ...charts]) {
    const meta = yaml.load(readFileSync(join(chartsDir, chart, "Chart.yaml"), "utf8")) as {
      kubeVersion?: string;
    };
    assert.equal(meta.kubeVersion, ">=1.30.0-0", chart);
  }
  assert.throws(() => template("quarry", ["--kube-version=1.29.9"]), /kubeVersion/);
  template("quarry", ["--kube-version=1.30.0"]);
});

describe("helm test", () => {
  const hooks = (docs: Manifest[]) =>
    docs
      .filter((d) => d.metadata.annotations?.["helm.sh/hook"] === "test")
      .map((d) => `${d.kind} ${d.metadata.name}`);

  test("the umbrella's test pod runs the lifecycle controller's image with the helm-test script, under its own ServiceAccount", () => {
    const docs = template("quarry", [
      "--set=global.image.tag=3.0.0",
      "--set=lifecycle-controller.imagePullSecrets[0]=regcred",
    ]);
    assert.deepEqual(hooks(docs), [
      "ServiceAccount quarry-helm-test",
      "Role quarry-helm-test",
      "RoleBinding quarry-helm-test",
      "Pod quarry-helm-test",
    ]);
    const p = find(docs, "Pod", "quarry-helm-test") as unknown as {
      spec: PodSpec & { serviceAccountName: string; containers: { command: string[] }[] };
    };
    assert.equal(p.spec.serviceAccountName, "quarry-helm-test");
    assert.equal(p.spec.containers[0]!.image, "ghcr.io/quarry-dev/lifecycle-controller:3.0.0");
    assert.deepEqual(p.spec.containers[0]!.command, ["node", "src/helm-test.js"]);
    assert.deepEqual(p.spec.imagePullSecrets, [{ name: "regcred" }]);
    assert.equal(p.spec.securityContext?.runAsNonRoot, true);
    // the script the command names is in the lifecycle controller's package (the image's /app)
    readFileSync(join(repoRoot, "services", "lifecycle-controller", "src", "helm-test.ts"));
    const role = find(docs, "Role", "quarry-helm-test") as unknown as {
      rules: { resources: string[]; verbs: string[] }[];
    };
    assert.deepEqual(
      role.rules.map((r) => `${r.resources}: ${r.verbs}`),
      ["tasks: create,get,delete", "resolutionrequests: create,get,delete"],
    );
  });

  test("not rendered when off, or without the lifecycle controller or the cluster resolver", () => {
    for (const off of ["helmTest.enabled", "lifecycle-controller.enabled", "cluster-resolver.enabled"])
      assert.deepEqual(hooks(template("quarry", [`--set=${off}=false`])), [], off);
    assert.deepEqual(hooks(template("quarry", ["--skip-tests"])), []);
  });
});
