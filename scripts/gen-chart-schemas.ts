// Writes charts/<chart>/values.schema.json for every chart with values, from the one description
// below: the eight service charts share most of their values (every template is quarry-lib's), so
// their schemas are one base plus each chart's own keys. helm validates the values it is given
// against the schema on install, upgrade, template and lint, and refuses a wrong type, a typo'd
// key or an out-of-range number before anything reaches the cluster.
// With --check, writes nothing and fails when a schema on disk differs (scripts/test.sh, pnpm
// test:charts). e2e/charts/schemas.test.ts checks each schema against its chart's values.yaml.
//   node scripts/gen-chart-schemas.ts [--check]
import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

type Schema = Record<string, unknown>;

const root = join(import.meta.dirname, "..");

const SERVICES = [
  "lifecycle-controller",
  "run-controller",
  "git-resolver",
  "bundle-resolver",
  "cluster-resolver",
  "pipe-resolver",
  "http-resolver",
  "hub-resolver",
] as const;
type Service = (typeof SERVICES)[number];

/** Resolvers Tekton ships too: they read Tekton's ConfigMaps in place and may be granted Secrets. */
const TEKTON_RESOLVERS: readonly Service[] = [
  "git-resolver",
  "bundle-resolver",
  "cluster-resolver",
  "http-resolver",
  "hub-resolver",
];
/** Resolvers that fetch over the network: egress values (CA bundle, proxy, blocked networks). */
const EGRESS: readonly Service[] = ["git-resolver", "bundle-resolver", "http-resolver", "hub-resolver"];

// building blocks
const str = (description?: string): Schema => ({ type: "string", ...(description && { description }) });
const bool: Schema = { type: "boolean" };
const int = (minimum: number, maximum?: number): Schema => ({
  type: "integer",
  minimum,
  ...(maximum !== undefined && { maximum }),
});
/** An object whose keys are all listed (a typo'd key is refused). */
const closed = (properties: Record<string, Schema>, description?: string): Schema => ({
  type: "object",
  ...(description && { description }),
  additionalProperties: false,
  properties,
});
/** A Kubernetes object or list passed through verbatim (the apiserver validates it). */
const k8sObject = (description: string): Schema => ({ type: "object", description });
const k8sList = (description: string): Schema => ({ type: "array", items: { type: "object" }, description });
const stringMap = (description: string): Schema => ({
  type: "object",
  description,
  additionalProperties: { type: "string" },
});
/** ConfigMap data and env: values are quoted into strings by the chart, so any scalar will do. */
const scalarMap = (description: string): Schema => ({
  type: "object",
  description,
  additionalProperties: { type: ["string", "number", "boolean"] },
});
/** A Go duration (leases, intervals), as the services and the Prometheus Operator parse them. */
const duration: Schema = { type: "string", pattern: "^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$" };
/** A Kubernetes quantity, or empty. */
const quantity: Schema = {
  type: "string",
  pattern: "^$|^[0-9]+(\\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti|P|Pi|E|Ei)?$",
};
/** An id the platform may assign instead (OpenShift): null leaves it out of the rendered context. */
const optionalId: Schema = { type: ["integer", "null"], minimum: 0 };
const pullSecrets: Schema = {
  type: "array",
  description: "pull Secrets: [{name: regcred}] (or bare names)",
  items: {
    oneOf: [
      { type: "string", minLength: 1 },
      { type: "object", required: ["name"], properties: { name: { type: "string", minLength: 1 } } },
    ],
  },
};
const tracing = (description: string): Schema =>
  closed(
    {
      otlpEndpoint: str(
        "OTLP/HTTP endpoint, e.g. http://otel-collector.observability:4318; empty: no export",
      ),
      headers: str("OTEL_EXPORTER_OTLP_HEADERS"),
      sampler: str("OTEL_TRACES_SAMPLER"),
      samplerArg: { type: ["string", "number"], description: "OTEL_TRACES_SAMPLER_ARG" },
    },
    description,
  );

/** global: what every Quarry chart reads; a parent chart may carry more globals of its own. */
const globalSchema: Schema = {
  type: "object",
  description: "defaults every Quarry chart reads (the umbrella hands them to each subchart)",
  properties: {
    image: closed({
      registry: str("registry of every Quarry image; empty: none"),
      tag: {
        type: ["string", "number"],
        description: "tag of every Quarry image; empty: the chart's appVersion",
      },
    }),
    imagePullSecrets: pullSecrets,
    monitoring: closed({
      skipCapabilitiesCheck: {
        ...bool,
        description: "render ServiceMonitor and PrometheusRule without checking the cluster serves them",
      },
      runbookBaseUrl: str("each alert's runbook_url is this plus the alert's name, lower-cased"),
    }),
    tracing: tracing("trace export for every service; a service's own tracing wins"),
    tektonConfigNamespace: str(
      "Tekton's resolvers namespace, read in place by the resolvers Tekton ships too",
    ),
    shardLabel: {
      ...bool,
      description:
        "the shard label everywhere: quarry-crds' shard policies and every service's leaderElection.shardLabel",
    },
    mode: {
      enum: ["fleet", "all-in-one"],
      description:
        "fleet: one Deployment per service; all-in-one: the umbrella's one Deployment (allInOne) runs them, a service chart renders its ConfigMap and RBAC only",
    },
  },
};

function serviceSchema(service: Service): Schema {
  const properties: Record<string, Schema> = {
    service: { const: service, description: "not a value: the service this chart runs" },
    global: globalSchema,
    enabled: { ...bool, description: "the umbrella's switch for this service" },
    "quarry-lib": { type: "object", description: "not a value: helm's entry for the library chart" },
    image: closed({
      registry: str("empty: global.image.registry"),
      repository: { type: "string", minLength: 1 },
      tag: {
        type: ["string", "number"],
        description: "empty: global.image.tag, then the chart's appVersion",
      },
      digest: {
        type: "string",
        pattern: "^$|^sha256:[0-9a-f]{64}$",
        description: "set: the image is pulled as <registry>/<repository>@<digest>",
      },
      pullPolicy: { enum: ["Always", "IfNotPresent", "Never"] },
    }),
    imagePullSecrets: pullSecrets,
    replicas: int(0),
    leaderElection: closed({
      enabled: bool,
      buckets: int(1),
      leaseDuration: duration,
      renewDeadline: duration,
      retryPeriod: duration,
      shardLabel: bool,
    }),
    concurrency: int(1),
    watchNamespace: str("empty: every namespace"),
    config: scalarMap("the service's ConfigMap (keys: the service's README)"),
    tracing: tracing("trace export (empty: global.tracing)"),
    nodeOptions: str("NODE_OPTIONS; empty: Node's defaults"),
    env: scalarMap("container env, name: value"),
    extraEnv: k8sList("more container env entries, verbatim"),
    optInClusterRoles: stringMap(
      "rbac.yaml key → name of the unbound ClusterRole a namespace binds to opt in",
    ),
    extraVolumes: k8sList("more Pod volumes"),
    extraVolumeMounts: k8sList("more container volume mounts"),
    resources: k8sObject("container resources"),
    tmpSizeLimit: quantity,
    podSecurityContext: {
      type: ["object", "null"],
      description: "the pod's securityContext; a key set to null is left out",
      properties: {
        runAsNonRoot: { type: ["boolean", "null"] },
        runAsUser: optionalId,
        runAsGroup: optionalId,
        fsGroup: optionalId,
        seccompProfile: { type: ["object", "null"] },
      },
    },
    securityContext: {
      type: ["object", "null"],
      description: "the container's securityContext; a key set to null is left out",
      properties: {
        allowPrivilegeEscalation: { type: ["boolean", "null"] },
        readOnlyRootFilesystem: { type: ["boolean", "null"] },
        runAsNonRoot: { type: ["boolean", "null"] },
        runAsUser: optionalId,
        capabilities: { type: ["object", "null"] },
        seccompProfile: { type: ["object", "null"] },
      },
    },
    serviceAccount: closed({ annotations: stringMap("annotations of the ServiceAccount") }),
    podAnnotations: stringMap("more annotations on the pods"),
    podLabels: stringMap("more labels on the pods"),
    priorityClassName: str("the pods' PriorityClass; empty: the cluster's default"),
    nodeSelector: stringMap("the pods' nodeSelector"),
    tolerations: k8sList("the pods' tolerations"),
    affinity: k8sObject("the pods' affinity"),
    topologySpreadConstraints: k8sList(
      "the pods' topologySpreadConstraints; without labelSelector, this service's pods",
    ),
    serviceMonitor: closed({ enabled: bool, interval: duration, labels: stringMap("more labels") }),
    prometheusRule: closed({
      enabled: bool,
      labels: stringMap("more labels"),
      extraRules: k8sList("more rules, appended to the chart's group"),
      ...(service === "lifecycle-controller" && {
        resolutionTimeouts: closed(
          {
            enabled: bool,
            window: duration,
            threshold: { type: "number", minimum: 0 },
            for: duration,
            severity: str(),
          },
          "the QuarryResolutionTimeouts alert",
        ),
      }),
    }),
    podDisruptionBudget: closed({
      enabled: bool,
      maxUnavailable: { type: ["integer", "string"], minimum: 0 },
    }),
    autoscaling: closed({
      enabled: bool,
      minReplicas: int(1),
      maxReplicas: int(1),
      targetCPUUtilizationPercentage: int(1),
    }),
    networkPolicy: closed({
      enabled: bool,
      metricsFrom: k8sList("NetworkPolicyPeers allowed to scrape metrics; empty: anyone"),
    }),
  };
  if (TEKTON_RESOLVERS.includes(service)) {
    properties.tektonConfigNamespace = str(
      "Tekton's resolvers namespace; empty: global.tektonConfigNamespace",
    );
    properties.tektonCacheConfig = {
      type: "string",
      pattern: "^$|^[^/]+/[^/]+$",
      description: "Tekton's resolver-cache-config as namespace/name",
    };
  }
  if (service === "git-resolver") {
    properties.secretReads = {
      type: "array",
      description: "Secrets the resolver may get, each where it lives",
      items: closed({
        namespace: { type: "string", minLength: 1 },
        secrets: { type: "array", minItems: 1, items: { type: "string", minLength: 1 } },
      }),
    };
  }
  if (EGRESS.includes(service)) {
    properties.egress = closed({
      caBundle: str("PEM certificates trusted besides the public roots"),
      proxy: str("http(s) forward proxy"),
      noProxy: str("hosts and CIDRs that bypass the proxy"),
      blockedNetworks: str("networks never connected to; empty: default"),
    });
  }
  if (service === "lifecycle-controller") {
    properties.conversionWebhook = closed({
      enabled: bool,
      port: int(1, 65535),
      certManager: closed({
        enabled: bool,
        issuerRef: k8sObject("an Issuer or ClusterIssuer {name, kind}; empty: a self-signed Issuer"),
        duration,
        renewBefore: duration,
      }),
      networkPolicy: closed({ enabled: bool, from: k8sList("NetworkPolicyPeers that may call the webhook") }),
    });
    properties.extraPorts = k8sList("more container ports");
  }
  return document(`Values of quarry-${service}`, properties);
}

function crdsSchema(): Schema {
  const toggle = closed({ enabled: bool });
  return document("Values of quarry-crds", {
    global: globalSchema,
    enabled: { ...bool, description: "the umbrella's switch for the CRDs" },
    tektonPipelinesInstalled: bool,
    crds: closed({
      resolutionrequests: toggle,
      runs: toggle,
      customruns: toggle,
      pipes: toggle,
      pipestrategies: toggle,
      clusterpipestrategies: toggle,
    }),
    admissionPolicies: closed({
      enabled: bool,
      shardLabel: bool,
    }),
    resolutionRequests: closed({
      conversionWebhook: closed({
        enabled: bool,
        service: closed({ name: str(), namespace: str(), port: int(1, 65535) }),
        certManager: closed({ enabled: bool, certificate: str() }),
      }),
    }),
  });
}

/**
 * The umbrella's allInOne: a service chart's Deployment values (the lifecycle controller's, whose
 * alert it carries), less what belongs to a service (its name, switch, ConfigMap, opt-in roles and
 * conversion webhook), and concurrency may be empty (QUARRY_CONCURRENCY unset).
 */
function allInOneSchema(): Schema {
  const base = (serviceSchema("lifecycle-controller").properties ?? {}) as Record<string, Schema>;
  const notHere = [
    "service",
    "global",
    "enabled",
    "quarry-lib",
    "config",
    "optInClusterRoles",
    "conversionWebhook",
    "extraPorts",
  ];
  const properties = Object.fromEntries(Object.entries(base).filter(([k]) => !notHere.includes(k)));
  properties.concurrency = {
    oneOf: [int(1), { const: "" }],
    description: "QUARRY_CONCURRENCY, workers of every controller; empty: each controller's default",
  };
  return closed(properties, "global.mode=all-in-one: the one Deployment running every enabled service");
}

function umbrellaSchema(): Schema {
  // each subchart validates its own values against its own schema
  const subchart = (name: string): Schema => ({ type: "object", description: `the values of ${name}` });
  return document("Values of quarry (the umbrella)", {
    global: globalSchema,
    allInOne: allInOneSchema(),
    "quarry-lib": { type: "object", description: "not a value: helm's entry for the library chart" },
    crds: subchart("quarry-crds"),
    ...Object.fromEntries(SERVICES.map((s) => [s, subchart(`quarry-${s}`)])),
    grafanaDashboard: closed({
      enabled: bool,
      label: str(),
      labelValue: str(),
      namespace: str(),
      labels: stringMap("more labels"),
      annotations: stringMap("annotations"),
    }),
    helmTest: closed({
      enabled: bool,
      timeout: duration,
      resources: k8sObject("the test pod's resources"),
    }),
  });
}

function document(title: string, properties: Record<string, Schema>): Schema {
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    title,
    type: "object",
    additionalProperties: false,
    properties,
  };
}

/** Every generated schema: chart directory (under charts/) → its values.schema.json text. */
export function chartSchemas(): Map<string, string> {
  const out = new Map<string, string>();
  const put = (chart: string, schema: Schema) => out.set(chart, `${JSON.stringify(schema, null, 2)}\n`);
  for (const s of SERVICES) put(s, serviceSchema(s));
  put("quarry-crds", crdsSchema());
  put("quarry", umbrellaSchema());
  return out;
}

function main(argv: readonly string[]): number {
  const check = argv.includes("--check");
  let stale = 0;
  for (const [chart, text] of chartSchemas()) {
    const file = join(root, "charts", chart, "values.schema.json");
    let current = "";
    try {
      current = readFileSync(file, "utf8");
    } catch {}
    if (current === text) continue;
    if (check) {
      console.error(`charts/${chart}/values.schema.json is stale: run node scripts/gen-chart-schemas.ts`);
      stale++;
    } else {
      writeFileSync(file, text);
      console.log(`wrote charts/${chart}/values.schema.json`);
    }
  }
  return stale === 0 ? 0 : 1;
}

// Run as a script, not when imported (import.meta.main needs Node >= 24.2; the repo allows 22).
if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
