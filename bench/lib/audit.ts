// Whose API calls a run cost, from kube-apiserver's audit log (a control plane started with
// `auditLog`: one JSON line per finished request, level Metadata): unlike apiserver_request_total,
// it names the user.
import { readFileSync } from "node:fs";

export interface AuditCall {
  user: string;
  verb: string;
  resource: string;
  subresource?: string;
  name?: string;
  code: number;
  /** requestReceivedTimestamp, ms since the epoch */
  at: number;
}

interface AuditEvent {
  verb?: string;
  user?: { username?: string };
  objectRef?: { resource?: string; subresource?: string; name?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp?: string;
}

/** The calls received in [fromMs, toMs) (wall clock); lines not (yet) whole JSON are skipped. */
export function readAudit(file: string, fromMs: number, toMs: number): AuditCall[] {
  const out: AuditCall[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.startsWith("{")) continue;
    let e: AuditEvent;
    try {
      e = JSON.parse(line) as AuditEvent;
    } catch {
      continue;
    }
    const at = Date.parse(e.requestReceivedTimestamp ?? "");
    if (!(at >= fromMs && at < toMs)) continue;
    out.push({
      user: e.user?.username ?? "",
      verb: e.verb ?? "",
      // non-resource URLs (/healthz, /metrics) have no objectRef
      resource: e.objectRef?.resource ?? "(non-resource)",
      subresource: e.objectRef?.subresource,
      name: e.objectRef?.name,
      code: e.responseStatus?.code ?? 0,
      at,
    });
  }
  return out;
}

/** The control plane's own clients by user name; `named` gives Quarry's (exact user names) theirs. */
export function clientOf(user: string, named: Readonly<Record<string, string>>): string {
  if (named[user]) return named[user];
  if (user.startsWith("system:node:")) return "kubelet";
  // --use-service-account-credentials: each controller acts as its ServiceAccount in kube-system
  if (user === "system:kube-controller-manager" || user.startsWith("system:serviceaccount:kube-system:"))
    return "kube-controller-manager";
  if (user === "system:kube-scheduler") return "kube-scheduler";
  return user;
}

/** client → "verb resource[/subresource] code" → count, keys sorted. */
export function callsByClient(
  calls: readonly AuditCall[],
  client: (user: string) => string,
): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const c of calls) {
    const name = client(c.user);
    out[name] ??= {};
    const by = out[name];
    const key = `${c.verb} ${c.resource}${c.subresource ? `/${c.subresource}` : ""} ${c.code}`;
    by[key] = (by[key] ?? 0) + 1;
  }
  for (const [k, v] of Object.entries(out))
    out[k] = Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return out;
}
