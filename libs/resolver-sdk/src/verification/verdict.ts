// Which policies a source falls under and what their authorities' checks add
// up to, with Tekton's semantics so a Tekton controller with trusted resources
// on reaches the same verdict: every matching enforce policy must pass (one of
// its keys verifying is enough, but a key that cannot be used fails the
// policy), warn policies are looked at once every enforce policy passed, and
// a source no policy covers is ignored, warned about or failed as the no-match
// setting says (Tekton's trusted-resources-verification-no-match-policy).
import { normalizeSource } from "./pattern.ts";
import { type Authority, policyCovers, type VerificationPolicy } from "./policy.ts";

export const NO_MATCH_POLICIES = ["ignore", "warn", "fail"] as const;
export type NoMatchPolicy = (typeof NO_MATCH_POLICIES)[number];

/** One authority's check of the source: it verified, it did not, or its key could not be used. */
export type AuthorityCheck =
  | { outcome: "verified"; detail: string }
  | { outcome: "failed"; message: string }
  | { outcome: "unusable"; message: string };

export type CheckAuthority = (policy: VerificationPolicy, authority: Authority) => Promise<AuthorityCheck>;

/** What verified the source under one policy: the authority and what it checked (a key, a signer). */
export interface PassedPolicy {
  policy: string;
  authority: string;
  detail: string;
}

export type Verdict =
  /** No policy covers the source and the no-match setting is ignore: nothing was checked. */
  | { kind: "skip" }
  | { kind: "pass"; passed: PassedPolicy[] }
  /** The data may be used; `message` says what did not verify (a warn policy, or no policy at all). */
  | { kind: "warn"; policy?: string; message: string; passed: PassedPolicy[] }
  /** The data must not be used. */
  | { kind: "fail"; policy?: string; message: string };

export async function decideVerification(
  uri: string,
  policies: readonly VerificationPolicy[],
  noMatch: NoMatchPolicy,
  check: CheckAuthority,
): Promise<Verdict> {
  const source = normalizeSource(uri);
  const matched = policies
    .filter((p) => policyCovers(p, source))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (matched.length === 0) {
    const message = `no verification policy matches ${uri}`;
    if (noMatch === "ignore") return { kind: "skip" };
    return noMatch === "warn" ? { kind: "warn", message, passed: [] } : { kind: "fail", message };
  }
  const passed: PassedPolicy[] = [];
  for (const policy of matched.filter((p) => p.mode === "enforce")) {
    const outcome = await applyPolicy(policy, check);
    if (!outcome.ok) return { kind: "fail", policy: policy.name, message: outcome.message };
    passed.push(outcome.passed);
  }
  for (const policy of matched.filter((p) => p.mode === "warn")) {
    const outcome = await applyPolicy(policy, check);
    if (!outcome.ok) return { kind: "warn", policy: policy.name, message: outcome.message, passed };
    passed.push(outcome.passed);
  }
  return { kind: "pass", passed };
}

async function applyPolicy(
  policy: VerificationPolicy,
  check: CheckAuthority,
): Promise<{ ok: true; passed: PassedPolicy } | { ok: false; message: string }> {
  const named = `verification policy ${policy.namespace}/${policy.name}`;
  if (policy.problem) return { ok: false, message: `${named} cannot be applied: ${policy.problem}` };
  const failures: string[] = [];
  let verified: PassedPolicy | undefined;
  for (const authority of policy.authorities) {
    const result = await check(policy, authority);
    if (result.outcome === "unusable")
      return { ok: false, message: `${named}: authority "${authority.name}": ${result.message}` };
    if (result.outcome === "failed") failures.push(`"${authority.name}": ${result.message}`);
    else verified ??= { policy: policy.name, authority: authority.name, detail: result.detail };
  }
  if (verified) return { ok: true, passed: verified };
  return { ok: false, message: `${named}: no authority verified it (${failures.join("; ")})` };
}
