// `quarry doctor`'s decisions: pure functions from what was read from the
// cluster to findings (ok, warn, fail, each with a hint). doctor-fetch.ts does
// the reading; this file is table-tested without a cluster.
import {
  CLUSTER_PIPE_STRATEGY_CRD_NAME,
  CUSTOM_RUN_CRD_NAME,
  PIPE_CRD_NAME,
  PIPE_STRATEGY_CRD_NAME,
  RESOLUTION_REQUEST_CRD_NAME,
  RESOLVER_SERVICE_ACCOUNTS,
  type ResolutionRequest,
  resolverTypeOf,
} from "@quarry/api";
import type { KubeObject, Lease } from "@quarry/kube";
import type { Deployment } from "./version.ts";

export type Level = "ok" | "warn" | "fail";

export interface Finding {
  level: Level;
  /** Which check: crds, policies, resolver TYPE, tekton-resolvers, opt-in NAMESPACE. */
  check: string;
  message: string;
  /** What to do about a warn or fail. */
  hint?: string;
}

/** Something doctor could not read (a 403), said instead of guessing. */
export interface Unreadable {
  unreadable: string;
}

export type Read<T> = T | Unreadable;

export function isUnreadable<T>(r: Read<T>): r is Unreadable {
  return typeof r === "object" && r !== null && "unreadable" in r;
}

export interface RoleBinding extends KubeObject {
  roleRef: { apiGroup?: string; kind: string; name: string };
}

/** Everything doctor reads, in one place. */
export interface Observed {
  systemNamespace: string;
  /** CRD name → served (present). */
  crds: Record<string, boolean>;
  /** Admission policy and binding names → present; an Unreadable when they could not be listed. */
  policies: Read<Record<string, boolean>>;
  /** Quarry's Deployments in the system namespace. */
  deployments: Read<Deployment[]>;
  /** Quarry's Leases in the system namespace. */
  leases: Read<Lease[]>;
  /** Tekton's resolvers Deployment; undefined when there is none. */
  tektonResolvers: Read<Deployment | undefined>;
  requests: Read<ResolutionRequest[]>;
  roleBindings: Read<RoleBinding[]>;
}

/** CRDs: Quarry's requests are required; the rest serve one feature each. */
export const REQUIRED_CRDS: Readonly<Record<string, { level: Level; needed: string }>> = {
  [RESOLUTION_REQUEST_CRD_NAME]: { level: "fail", needed: "every resolver" },
  [PIPE_CRD_NAME]: { level: "warn", needed: "the pipe resolver" },
  [PIPE_STRATEGY_CRD_NAME]: { level: "warn", needed: "the pipe resolver" },
  [CLUSTER_PIPE_STRATEGY_CRD_NAME]: { level: "warn", needed: "the pipe resolver" },
  [CUSTOM_RUN_CRD_NAME]: { level: "warn", needed: "the run-controller and custom tasks" },
};

/** Which params of which resolver type need which opt-in ClusterRole bound in the request's namespace. */
export const OPT_INS: readonly {
  type: string;
  params: readonly string[] | "any";
  clusterRole: string;
  serviceAccount: string;
}[] = [
  {
    type: "git",
    params: ["gitToken"],
    clusterRole: "quarry-git-resolver-tokens",
    serviceAccount: "quarry-git-resolver",
  },
  {
    type: "bundles",
    params: ["secret", "serviceAccount"],
    clusterRole: "quarry-bundle-resolver-credentials",
    serviceAccount: "quarry-bundle-resolver",
  },
  {
    type: "http",
    params: ["http-password-secret"],
    clusterRole: "quarry-http-resolver-credentials",
    serviceAccount: "quarry-http-resolver",
  },
  {
    type: "pipe",
    params: "any",
    clusterRole: "quarry-pipe-resolver-namespace",
    serviceAccount: "quarry-pipe-resolver",
  },
];

export function doctorFindings(o: Observed, now: number): Finding[] {
  return [
    ...crdFindings(o.crds),
    policyFindings(o.policies),
    ...serviceFindings(o, now),
    tektonResolversFinding(o.tektonResolvers, o.deployments),
    ...optInFindings(o.requests, o.roleBindings, o.systemNamespace),
  ];
}

export function crdFindings(crds: Record<string, boolean>): Finding[] {
  return Object.entries(REQUIRED_CRDS).map(([name, { level, needed }]) =>
    crds[name]
      ? { level: "ok", check: "crds", message: `${name} is served` }
      : {
          level,
          check: "crds",
          message: `${name} is missing: ${needed} cannot work`,
          hint:
            level === "fail"
              ? "install the quarry-crds chart (or release.yaml)"
              : name.endsWith("tekton.dev")
                ? "install Tekton Pipelines, or Quarry's run CRDs on a cluster without it"
                : "install the quarry-crds chart",
        },
  );
}

export function policyFindings(policies: Read<Record<string, boolean>>): Finding {
  if (isUnreadable(policies))
    return {
      level: "warn",
      check: "policies",
      message: `cannot read admission policies: ${policies.unreadable}`,
    };
  const names = Object.keys(policies);
  const missing = names.filter((n) => !policies[n]);
  if (missing.length === 0)
    return {
      level: "ok",
      check: "policies",
      message: `${names.length} admission policies and bindings present`,
    };
  return {
    level: "warn",
    check: "policies",
    message: `${missing.length} of ${names.length} admission policies or bindings missing: ${missing.join(", ")}`,
    hint: "install the quarry-crds chart's policies (Kubernetes >= 1.30 serves ValidatingAdmissionPolicy v1)",
  };
}

const BUCKET_NAME = /^(.+)\.(\d+)-of-(\d+)$/;
const SERVICE_LABEL = "quarry.dev/service";

/** A Lease is live while its holder renewed it within its duration (a little slack for clock skew). */
export function leaseLive(lease: Lease, now: number, slackMs = 2_000): boolean {
  const spec = lease.spec;
  if (!spec?.holderIdentity || !spec.renewTime) return false;
  const duration = (spec.leaseDurationSeconds ?? 15) * 1000;
  return Date.parse(spec.renewTime) + duration + slackMs >= now;
}

/** Per service: whether a live replica holds each of its buckets, else whether a replica is ready. */
export function serviceFindings(o: Observed, now: number): Finding[] {
  if (isUnreadable(o.deployments) || isUnreadable(o.leases)) {
    const why = isUnreadable(o.deployments) ? o.deployments.unreadable : (o.leases as Unreadable).unreadable;
    return [
      { level: "warn", check: "services", message: `cannot read the fleet in ${o.systemNamespace}: ${why}` },
    ];
  }
  const deployments = o.deployments;
  const leases = o.leases;
  const services = new Map<string, Deployment | undefined>();
  for (const d of deployments)
    services.set(d.metadata.labels?.["app.kubernetes.io/name"] ?? d.metadata.name ?? "", d);
  for (const l of leases) {
    const svc = l.metadata.labels?.[SERVICE_LABEL];
    if (svc && !services.has(svc)) services.set(svc, undefined);
  }
  if (services.size === 0)
    return [
      {
        level: "warn",
        check: "services",
        message: `no Quarry Deployment or Lease in namespace ${o.systemNamespace}`,
        hint: "pass --system-namespace if the fleet runs elsewhere",
      },
    ];
  const findings = [...services.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([svc, dep]) =>
      serviceFinding(
        svc,
        dep,
        leases.filter((l) => l.metadata.labels?.[SERVICE_LABEL] === svc),
        now,
      ),
    );
  // a resolver type nobody serves: its requests wait until they time out
  const served = new Set(
    deployments.map((d) => RESOLVER_SERVICE_ACCOUNTS[d.metadata.name ?? ""]).filter((t) => t !== undefined),
  );
  if (deployments.length > 0) {
    for (const type of new Set(Object.values(RESOLVER_SERVICE_ACCOUNTS))) {
      if (!served.has(type))
        findings.push({
          level: "warn",
          check: `resolver ${type}`,
          message: `no Deployment serves type ${type}: its requests wait until they time out`,
          hint: `enable the ${type} resolver in the quarry chart, or leave such requests to another resolver`,
        });
    }
  }
  return findings;
}

function serviceFinding(
  svc: string,
  dep: Deployment | undefined,
  leases: readonly Lease[],
  now: number,
): Finding {
  const type = dep ? RESOLVER_SERVICE_ACCOUNTS[dep.metadata.name ?? ""] : undefined;
  const check = type ? `resolver ${type}` : `service ${svc}`;
  const buckets = leases.filter((l) => l.metadata.labels?.["quarry.dev/lease"] === "bucket");
  const members = leases.filter(
    (l) => l.metadata.labels?.["quarry.dev/lease"] === "member" && leaseLive(l, now),
  );
  if (buckets.length > 0) {
    // mid-rollout two counts may exist: the one whose Leases were renewed last is in force
    const byCount = new Map<number, Lease[]>();
    for (const l of buckets) {
      const m = BUCKET_NAME.exec(l.metadata.name ?? "");
      if (!m) continue;
      const count = Number(m[3]);
      byCount.set(count, [...(byCount.get(count) ?? []), l]);
    }
    const latest = (ls: Lease[]) => Math.max(...ls.map((l) => Date.parse(l.spec?.renewTime ?? "") || 0));
    const [count, inForce] = [...byCount.entries()].sort((a, b) => latest(b[1]) - latest(a[1]))[0] ?? [0, []];
    const held = new Map<number, string>();
    for (const l of inForce) {
      if (leaseLive(l, now))
        held.set(Number(BUCKET_NAME.exec(l.metadata.name ?? "")![2]), l.spec!.holderIdentity!);
    }
    const unheld = Array.from({ length: count }, (_, i) => i).filter((i) => !held.has(i));
    const holders = new Set(held.values()).size;
    if (unheld.length === 0)
      return {
        level: "ok",
        check,
        message: `${svc}: ${count} of ${count} buckets held by ${holders} live replica${holders === 1 ? "" : "s"}`,
      };
    const width = Math.max(2, String(count).length);
    return {
      level: "fail",
      check,
      message: `${svc}: bucket${unheld.length === 1 ? "" : "s"} ${unheld.map((i) => String(i).padStart(width, "0")).join(", ")} of ${count} held by no live replica (${members.length} live member${members.length === 1 ? "" : "s"})`,
      hint: `requests in those buckets wait: check the ${svc} pods (kubectl -n <system namespace> get pods -l app.kubernetes.io/name=${svc})`,
    };
  }
  if (!dep)
    return {
      level: "ok",
      check,
      message: `${svc}: ${members.length} live replica(s) by their member Leases`,
    };
  const want = dep.spec?.replicas ?? 1;
  const ready = dep.status?.readyReplicas ?? 0;
  if (want === 0)
    return {
      level: "warn",
      check,
      message: `${svc}: scaled to zero replicas`,
      hint: "scale it up to serve its requests",
    };
  if (ready === 0)
    return {
      level: "fail",
      check,
      message: `${svc}: 0 of ${want} replicas ready`,
      hint: `kubectl -n ${dep.metadata.namespace} describe deployment ${dep.metadata.name}`,
    };
  return {
    level: "ok",
    check,
    message: `${svc}: ${ready} of ${want} replicas ready (one bucket, no leader election: every replica owns every key)`,
  };
}

export function tektonResolversFinding(
  tekton: Read<Deployment | undefined>,
  quarry: Read<Deployment[]>,
): Finding {
  const check = "tekton-resolvers";
  if (isUnreadable(tekton))
    return { level: "warn", check, message: `cannot read Tekton's resolvers: ${tekton.unreadable}` };
  if (tekton === undefined) return { level: "ok", check, message: "Tekton's resolvers are not installed" };
  const replicas = tekton.spec?.replicas ?? 1;
  if (replicas === 0)
    return { level: "ok", check, message: "Tekton's resolvers are scaled to zero: Quarry answers" };
  const quarryResolvers = isUnreadable(quarry)
    ? 0
    : quarry.filter((d) => RESOLVER_SERVICE_ACCOUNTS[d.metadata.name ?? ""] !== undefined).length;
  if (quarryResolvers === 0)
    return {
      level: "ok",
      check,
      message: `Tekton's resolvers run (${replicas} replicas) and no Quarry resolver does`,
    };
  return {
    level: "warn",
    check,
    message: `Tekton's resolvers run (${replicas} replicas) beside Quarry's: both answer the same types`,
    hint: "scale tekton-pipelines-remote-resolvers to 0 (docs/tekton-drop-in.md, section 2)",
  };
}

/** Namespaces whose requests need an opt-in RoleBinding they lack (docs/operator-guide.md section 9). */
export function optInFindings(
  requests: Read<ResolutionRequest[]>,
  bindings: Read<RoleBinding[]>,
  systemNamespace: string,
): Finding[] {
  if (isUnreadable(requests))
    return [
      { level: "warn", check: "opt-ins", message: `cannot list ResolutionRequests: ${requests.unreadable}` },
    ];
  if (isUnreadable(bindings))
    return [{ level: "warn", check: "opt-ins", message: `cannot list RoleBindings: ${bindings.unreadable}` }];
  const bound = new Set(
    bindings
      .filter((b) => b.roleRef.kind === "ClusterRole")
      .map((b) => `${b.metadata.namespace}/${b.roleRef.name}`),
  );
  // namespace/clusterRole → how many requests need it
  const needed = new Map<string, { namespace: string; optIn: (typeof OPT_INS)[number]; count: number }>();
  for (const rr of requests) {
    const type = resolverTypeOf(rr.metadata.labels).type;
    const names = new Set((rr.spec.params ?? []).map((p) => p.name));
    for (const optIn of OPT_INS) {
      if (optIn.type !== type) continue;
      if (optIn.params !== "any" && !optIn.params.some((p) => names.has(p))) continue;
      const ns = rr.metadata.namespace ?? "";
      const key = `${ns}/${optIn.clusterRole}`;
      if (bound.has(key)) continue;
      const seen = needed.get(key);
      needed.set(key, { namespace: ns, optIn, count: (seen?.count ?? 0) + 1 });
    }
  }
  if (needed.size === 0)
    return [{ level: "ok", check: "opt-ins", message: "no namespace needs an opt-in it lacks" }];
  return [...needed.values()]
    .sort((a, b) => (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : 0))
    .map(({ namespace, optIn, count }) => ({
      level: "warn",
      check: `opt-in ${namespace}`,
      message: `${count} ${optIn.type} request${count === 1 ? "" : "s"} in ${namespace}${optIn.params === "any" ? "" : ` name ${optIn.params.join(" or ")}`} without a RoleBinding to ClusterRole ${optIn.clusterRole}: they fail Forbidden`,
      hint: `kubectl -n ${namespace} create rolebinding ${optIn.clusterRole} --clusterrole=${optIn.clusterRole} --serviceaccount=${systemNamespace}:${optIn.serviceAccount}`,
    }));
}

/** One line per finding, the hint indented below it. */
export function formatFindings(findings: readonly Finding[]): string {
  const width = Math.max(...findings.map((f) => f.check.length));
  return findings
    .map((f) => {
      const line = `${`[${f.level}]`.padEnd(7)}${f.check.padEnd(width + 2)}${f.message}\n`;
      return f.hint ? `${line}${" ".repeat(width + 9)}→ ${f.hint}\n` : line;
    })
    .join("");
}

/** Doctor's exit code: 1 when any check failed. */
export function exitCodeOf(findings: readonly Finding[]): number {
  return findings.some((f) => f.level === "fail") ? 1 : 0;
}
