// The pipe resolver's pod policy: what a strategy's pod may ask of the node
// and the namespace. The resolver creates the pod with its own rights, so a
// pod spec passed as written would let whoever writes a strategy run a
// privileged container, mount the node's disk, join the node's network or
// process namespaces, or run as any ServiceAccount of an opted-in namespace.
// By default each is refused before the pod is made; an operator allows what
// its strategies need in pipe-resolver-config:
//
//   pod-policy-allow          which of POD_POLICY_RULES to allow (default: none)
//   allowed-service-accounts  ServiceAccounts a pod may name besides the
//                             namespace's `default`: `name` (in any namespace),
//                             `namespace/name`, or `*` (default: none)
//
// Only the strategy's own spec is judged: what the operator's config adds
// (host-network, node-name, tolerations) is the operator's choice already.
// Seccomp, AppArmor, SELinux, procMount and sysctls are left to Pod Security
// admission on the opted-in namespaces (docs/operator-guide.md).
import type { PodSpec } from "@quarry/api";

/** What pod-policy-allow may list: one name per kind of host access the policy refuses. */
export const POD_POLICY_RULES = [
  "privileged",
  "allowPrivilegeEscalation",
  "capabilities",
  "hostNetwork",
  "hostPID",
  "hostIPC",
  "hostPath",
  "hostPort",
  "hostProcess",
] as const;
export type PodPolicyRule = (typeof POD_POLICY_RULES)[number];

export interface PodPolicy {
  /** Rules the operator allows (pod-policy-allow). */
  allow: ReadonlySet<PodPolicyRule>;
  /** allowed-service-accounts: `name`, `namespace/name` or `*`; the namespace's `default` is always allowed. */
  serviceAccounts: readonly string[];
}

export const defaultPodPolicy: PodPolicy = { allow: new Set(), serviceAccounts: [] };

export interface PodPolicyViolation {
  /** The field in the strategy, e.g. `spec.pod.initContainers[0].securityContext.privileged`. */
  field: string;
  /** The pod-policy-allow entry that would allow it; undefined for a ServiceAccount (allowed-service-accounts). */
  rule?: PodPolicyRule;
  /** What the field asks for, e.g. "a privileged container". */
  what: string;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The namespace's `default` ServiceAccount (what a pod that names none runs as) is always allowed. */
export function serviceAccountAllowed(policy: PodPolicy, namespace: string, account: string): boolean {
  if (account === "default") return true;
  // a name, never a path: "team-a/x" must not match the entry that names team-a's x
  if (account.includes("/")) return false;
  return policy.serviceAccounts.some((a) => a === "*" || a === account || a === `${namespace}/${account}`);
}

/** Every field of a container (securityContext, ports) the policy refuses. */
function containerViolations(c: unknown, at: string, out: PodPolicyViolation[]): void {
  if (!isRecord(c)) return;
  const sc = c.securityContext;
  if (isRecord(sc)) {
    if (sc.privileged === true)
      out.push({
        field: `${at}.securityContext.privileged`,
        rule: "privileged",
        what: "a privileged container",
      });
    if (sc.allowPrivilegeEscalation === true)
      out.push({
        field: `${at}.securityContext.allowPrivilegeEscalation`,
        rule: "allowPrivilegeEscalation",
        what: "privilege escalation",
      });
    const caps = sc.capabilities;
    if (isRecord(caps) && Array.isArray(caps.add) && caps.add.length > 0)
      out.push({
        field: `${at}.securityContext.capabilities.add`,
        rule: "capabilities",
        what: "added capabilities",
      });
    if (isRecord(sc.windowsOptions) && sc.windowsOptions.hostProcess === true)
      out.push({
        field: `${at}.securityContext.windowsOptions.hostProcess`,
        rule: "hostProcess",
        what: "a Windows host process",
      });
  }
  if (Array.isArray(c.ports))
    for (const [j, p] of c.ports.entries())
      if (isRecord(p) && typeof p.hostPort === "number" && p.hostPort !== 0)
        out.push({ field: `${at}.ports[${j}].hostPort`, rule: "hostPort", what: "a port on the node" });
}

/**
 * What the strategy's pod spec asks for that the policy does not allow, in field order; empty when
 * the pod may be made. `namespace` is the request's (the pod's): a ServiceAccount is looked up there.
 */
export function checkPodPolicy(pod: PodSpec, policy: PodPolicy, namespace: string): PodPolicyViolation[] {
  const found: PodPolicyViolation[] = [];
  for (const field of ["serviceAccountName", "serviceAccount"] as const) {
    const account = pod[field];
    if (typeof account === "string" && account !== "" && !serviceAccountAllowed(policy, namespace, account))
      found.push({ field: `spec.pod.${field}`, what: `ServiceAccount ${JSON.stringify(account)}` });
  }
  for (const field of ["hostNetwork", "hostPID", "hostIPC"] as const)
    if (pod[field] === true)
      found.push({ field: `spec.pod.${field}`, rule: field, what: "a host namespace" });
  const podSc = pod.securityContext;
  if (isRecord(podSc) && isRecord(podSc.windowsOptions) && podSc.windowsOptions.hostProcess === true)
    found.push({
      field: "spec.pod.securityContext.windowsOptions.hostProcess",
      rule: "hostProcess",
      what: "a Windows host process",
    });
  if (Array.isArray(pod.volumes))
    for (const [i, v] of pod.volumes.entries())
      if (isRecord(v) && v.hostPath !== undefined)
        found.push({
          field: `spec.pod.volumes[${i}].hostPath`,
          rule: "hostPath",
          what: "a directory of the node",
        });
  // every container list, though a valid strategy has one init container and no others (the
  // waiting container Quarry adds copies the init container's securityContext)
  for (const list of ["initContainers", "containers", "ephemeralContainers"] as const) {
    const containers = pod[list];
    if (Array.isArray(containers))
      for (const [i, c] of containers.entries()) containerViolations(c, `spec.pod.${list}[${i}]`, found);
  }
  return found.filter((v) => v.rule === undefined || !policy.allow.has(v.rule));
}

/** The refusal's message: the strategy, each field with what it asks for and the key that would allow it. */
export function podPolicyMessage(subject: string, violations: readonly PodPolicyViolation[]): string {
  const each = violations.map(
    (v) =>
      `${v.field} (${v.what}; ${v.rule ? `pod-policy-allow: ${v.rule}` : "allowed-service-accounts"} would allow it)`,
  );
  return `${subject}: the pipe resolver's pod policy refuses ${each.join(", ")}; an operator allows these in pipe-resolver-config`;
}
