// Serving ResolutionRequest v1alpha1: quarry-crds switches the CRD to webhook conversion, the
// lifecycle chart runs the webhook (Service, port, env, certificate Secret or cert-manager
// Certificate, rbac.yaml's webhook rules); off, both render as before.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { resolutionRequestCrd, resolutionRequestCrdWithConversion } from "@quarry/api";
import { chartsDir, find, type Manifest, template } from "@quarry/harness/helm";
import yaml from "js-yaml";

const RR = "resolutionrequests.resolution.tekton.dev";
const rbac = yaml.load(readFileSync(join(chartsDir, "lifecycle-controller", "rbac.yaml"), "utf8")) as Record<
  string,
  unknown
>;
type Crd = Manifest & { spec: ReturnType<typeof resolutionRequestCrd>["spec"] };
type Pod = {
  containers: {
    env: { name: string; value?: string }[];
    ports: { name: string; containerPort: number }[];
    volumeMounts: { name: string; mountPath: string }[];
  }[];
  volumes: { name: string; secret?: { secretName: string } }[];
};
type NetworkPolicy = Manifest & {
  spec: {
    podSelector: { matchLabels: Record<string, string> };
    policyTypes: string[];
    ingress: { ports: { port: string; protocol: string }[]; from?: unknown[] }[];
  };
};
const pod = (docs: Manifest[]) =>
  (find(docs, "Deployment") as unknown as { spec: { template: { spec: Pod } } }).spec.template.spec;
const envOf = (docs: Manifest[]) =>
  Object.fromEntries(pod(docs).containers[0]!.env.map((e) => [e.name, e.value]));

describe("conversion webhook (charts)", () => {
  test("quarry-crds, off (default): the RR CRD serves v1beta1 only, no conversion", () => {
    const crd = find(template("quarry-crds"), "CustomResourceDefinition", RR) as Crd;
    assert.deepEqual(crd.spec, resolutionRequestCrd().spec);
  });

  test("quarry-crds, on: v1alpha1 and v1beta1 served (v1beta1 stored), Webhook conversion to the lifecycle Service", () => {
    const crd = find(
      template("quarry-crds", ["--set", "resolutionRequests.conversionWebhook.enabled=true"], "qs"),
      "CustomResourceDefinition",
      RR,
    ) as Crd;
    const want = resolutionRequestCrdWithConversion({
      service: { name: "quarry-lifecycle-controller-webhook", namespace: "qs", path: "/convert", port: 443 },
    });
    assert.deepEqual(crd.spec, want.spec);
    assert.deepEqual(crd.metadata.annotations, { "helm.sh/resource-policy": "keep" });
  });

  test("quarry-crds, on with cert-manager: the cainjector annotation names the lifecycle chart's Certificate", () => {
    const crd = find(
      template("quarry-crds", [
        "--set",
        "resolutionRequests.conversionWebhook.enabled=true",
        "--set",
        "resolutionRequests.conversionWebhook.certManager.enabled=true",
        "--set",
        "resolutionRequests.conversionWebhook.service.namespace=other",
      ]),
      "CustomResourceDefinition",
      RR,
    ) as Crd;
    assert.equal(
      crd.metadata.annotations?.["cert-manager.io/inject-ca-from"],
      "other/quarry-lifecycle-controller-webhook",
    );
    assert.equal(crd.spec.conversion?.webhook?.clientConfig.service?.namespace, "other");
  });

  test("lifecycle-controller, off (default): no webhook Service, Secret, port, env or RBAC", () => {
    const docs = template("lifecycle-controller");
    assert.equal(find(docs, "Service", "quarry-lifecycle-controller-webhook"), undefined);
    assert.equal(find(docs, "Secret"), undefined);
    assert.equal(envOf(docs).QUARRY_CONVERSION_WEBHOOK, undefined);
    assert.deepEqual(
      pod(docs).containers[0]!.ports.map((p) => p.name),
      ["metrics"],
    );
    assert.equal(find(docs, "ClusterRole", "quarry-lifecycle-controller-webhook"), undefined);
  });

  test("lifecycle-controller, on: Service 443 → port webhook, empty Secret, env, rbac.yaml's webhook rules bound", () => {
    const docs = template("lifecycle-controller", ["--set", "conversionWebhook.enabled=true"]);
    const svc = find(docs, "Service", "quarry-lifecycle-controller-webhook") as Manifest & {
      spec: { ports: unknown[]; selector: Record<string, string> };
    };
    assert.deepEqual(svc.spec.ports, [
      { name: "webhook", port: 443, targetPort: "webhook", protocol: "TCP" },
    ]);
    assert.equal(svc.spec.selector["app.kubernetes.io/name"], "lifecycle-controller");
    assert.deepEqual(
      pod(docs).containers[0]!.ports.map((p) => [p.name, p.containerPort]),
      [
        ["metrics", 8080],
        ["webhook", 9443],
      ],
    );
    const secret = find(docs, "Secret", "quarry-lifecycle-controller-webhook-tls") as Manifest & {
      data?: unknown;
    };
    assert.ok(secret);
    assert.equal(secret.data, undefined, "no data: an upgrade keeps what the controller wrote");
    const env = envOf(docs);
    assert.equal(env.QUARRY_CONVERSION_WEBHOOK, "on");
    assert.equal(env.QUARRY_CONVERSION_WEBHOOK_PORT, "9443");
    assert.equal(env.QUARRY_CONVERSION_WEBHOOK_CERTS, "self-issued");
    assert.ok(
      env.QUARRY_CONVERSION_WEBHOOK_HOSTS?.split(",").includes(
        "quarry-lifecycle-controller-webhook.quarry-system.svc",
      ),
    );
    assert.deepEqual(
      find(docs, "ClusterRole", "quarry-lifecycle-controller-webhook")?.rules,
      rbac.conversionWebhookClusterRules,
    );
    assert.deepEqual(
      find(docs, "Role", "quarry-lifecycle-controller-webhook")?.rules,
      rbac.conversionWebhookNamespaceRules,
    );
    for (const kind of ["ClusterRoleBinding", "RoleBinding"]) {
      assert.deepEqual(find(docs, kind, "quarry-lifecycle-controller-webhook")?.subjects, [
        { kind: "ServiceAccount", name: rbac.serviceAccountName, namespace: "quarry-system" },
      ]);
    }
    // the webhook's RBAC names one CRD and one Secret, nothing broader
    for (const rule of [
      ...(rbac.conversionWebhookClusterRules as { resourceNames?: string[] }[]),
      ...(rbac.conversionWebhookNamespaceRules as { resourceNames?: string[] }[]),
    ]) {
      assert.equal(rule.resourceNames?.length, 1);
    }
  });

  test("lifecycle-controller, on with cert-manager: a Certificate into the Secret, mounted; no Secret object, no webhook RBAC", () => {
    const docs = template("lifecycle-controller", [
      "--set",
      "conversionWebhook.enabled=true",
      "--set",
      "conversionWebhook.certManager.enabled=true",
    ]);
    const cert = find(docs, "Certificate", "quarry-lifecycle-controller-webhook") as Manifest & {
      spec: { secretName: string; dnsNames: string[]; issuerRef: { name: string; kind: string } };
    };
    assert.equal(cert.spec.secretName, "quarry-lifecycle-controller-webhook-tls");
    assert.ok(cert.spec.dnsNames.includes("quarry-lifecycle-controller-webhook.quarry-system.svc"));
    assert.ok(find(docs, "Issuer", cert.spec.issuerRef.name), "the self-signed Issuer it names");
    assert.equal(find(docs, "Secret"), undefined);
    assert.equal(find(docs, "ClusterRole", "quarry-lifecycle-controller-webhook"), undefined);
    assert.equal(envOf(docs).QUARRY_CONVERSION_WEBHOOK_CERTS, "files");
    const p = pod(docs);
    assert.deepEqual(p.volumes.find((v) => v.name === "webhook-tls")?.secret, {
      secretName: "quarry-lifecycle-controller-webhook-tls",
    });
    assert.equal(
      p.containers[0]!.volumeMounts.find((m) => m.name === "webhook-tls")?.mountPath,
      "/var/run/quarry/webhook-tls",
    );
    const withIssuer = template("lifecycle-controller", [
      "--set",
      "conversionWebhook.enabled=true",
      "--set",
      "conversionWebhook.certManager.enabled=true",
      "--set",
      "conversionWebhook.certManager.issuerRef.name=corp-ca",
      "--set",
      "conversionWebhook.certManager.issuerRef.kind=ClusterIssuer",
    ]);
    assert.equal(find(withIssuer, "Issuer"), undefined);
    assert.deepEqual(
      (find(withIssuer, "Certificate") as unknown as { spec: { issuerRef: unknown } }).spec.issuerRef,
      { name: "corp-ca", kind: "ClusterIssuer" },
    );
  });

  test("lifecycle-controller, on: a NetworkPolicy admits only the webhook port (from anywhere) and the metrics port", () => {
    const docs = template("lifecycle-controller", ["--set", "conversionWebhook.enabled=true"]);
    const policies = docs.filter((d) => d.kind === "NetworkPolicy") as unknown as NetworkPolicy[];
    assert.deepEqual(
      policies.map((p) => p.metadata.name),
      ["quarry-lifecycle-controller-webhook"],
    );
    const np = policies[0]!;
    assert.deepEqual(np.spec.policyTypes, ["Ingress"]);
    assert.equal(np.spec.podSelector.matchLabels["app.kubernetes.io/name"], "lifecycle-controller");
    assert.deepEqual(np.spec.ingress, [
      { ports: [{ port: "webhook", protocol: "TCP" }] },
      { ports: [{ port: "metrics", protocol: "TCP" }] },
    ]);
  });

  test("lifecycle-controller, on: the NetworkPolicy's peers narrow each port; it replaces networkPolicy; it can be turned off", () => {
    const narrowed = template("lifecycle-controller", [
      "--set",
      "conversionWebhook.enabled=true",
      "--set",
      "conversionWebhook.networkPolicy.from[0].ipBlock.cidr=10.0.0.0/24",
      "--set",
      "networkPolicy.enabled=true",
      "--set",
      "networkPolicy.metricsFrom[0].namespaceSelector.matchLabels.name=monitoring",
    ]);
    const policies = narrowed.filter((d) => d.kind === "NetworkPolicy") as unknown as NetworkPolicy[];
    assert.deepEqual(
      policies.map((p) => p.metadata.name),
      ["quarry-lifecycle-controller-webhook"],
      "one policy: a second (quarry-lib's) would admit the webhook port from anywhere beside it",
    );
    assert.deepEqual(policies[0]!.spec.ingress, [
      { ports: [{ port: "webhook", protocol: "TCP" }], from: [{ ipBlock: { cidr: "10.0.0.0/24" } }] },
      {
        ports: [{ port: "metrics", protocol: "TCP" }],
        from: [{ namespaceSelector: { matchLabels: { name: "monitoring" } } }],
      },
    ]);

    const off = template("lifecycle-controller", [
      "--set",
      "conversionWebhook.enabled=true",
      "--set",
      "conversionWebhook.networkPolicy.enabled=false",
    ]);
    assert.equal(find(off, "NetworkPolicy"), undefined);
    // off, quarry-lib's networkPolicy still admits the webhook port beside the metrics port
    const general = template("lifecycle-controller", [
      "--set",
      "conversionWebhook.enabled=true",
      "--set",
      "conversionWebhook.networkPolicy.enabled=false",
      "--set",
      "networkPolicy.enabled=true",
    ]);
    const np = find(general, "NetworkPolicy") as unknown as NetworkPolicy;
    assert.equal(np.metadata.name, "quarry-lifecycle-controller");
    assert.deepEqual(
      np.spec.ingress.map((r) => r.ports[0]?.port),
      ["metrics", "webhook"],
    );
  });

  test("lifecycle-controller, off (default): no NetworkPolicy", () => {
    assert.equal(find(template("lifecycle-controller"), "NetworkPolicy"), undefined);
  });
});
