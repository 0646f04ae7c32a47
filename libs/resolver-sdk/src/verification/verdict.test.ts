import assert from "node:assert/strict";
import { test } from "node:test";
import { compilePattern } from "./pattern.ts";
import type { VerificationPolicy } from "./policy.ts";
import {
  type AuthorityCheck,
  type CheckAuthority,
  decideVerification,
  type NoMatchPolicy,
} from "./verdict.ts";

async function policy(
  name: string,
  mode: "enforce" | "warn",
  pattern: string,
  authorities: string[],
  problem?: string,
): Promise<VerificationPolicy> {
  const c = await compilePattern(pattern);
  assert.ok(c.ok);
  return {
    namespace: "ns",
    name,
    mode,
    patterns: [c.pattern],
    authorities: authorities.map((a) => ({ name: a, key: { from: "data", pem: a }, hash: "" })),
    ...(problem && { problem }),
  };
}

/** Authorities named good-* verify, bad-* do not, broken-* have an unusable key. */
const check: CheckAuthority = async (_p, a): Promise<AuthorityCheck> =>
  a.name.startsWith("good")
    ? { outcome: "verified", detail: `key ${a.name}` }
    : a.name.startsWith("bad")
      ? { outcome: "failed", message: "signature does not verify" }
      : { outcome: "unusable", message: "Secret ns/keys not found" };

const URI = "git+https://git.example/team/tasks.git";
const ALL = "https://git\\.example/team/.*";

test("verdicts: enforce policies all pass (any key), warn policies after them, no-match as configured", async () => {
  const rows: [what: string, policies: VerificationPolicy[], noMatch: NoMatchPolicy, want: unknown][] = [
    ["no policy, ignore", [], "ignore", { kind: "skip" }],
    [
      "no policy, warn",
      [],
      "warn",
      { kind: "warn", message: `no verification policy matches ${URI}`, passed: [] },
    ],
    ["no policy, fail", [], "fail", { kind: "fail", message: `no verification policy matches ${URI}` }],
    [
      "a policy for another repository only",
      [await policy("other", "enforce", "https://git\\.example/other/.*", ["bad-1"])],
      "fail",
      { kind: "fail", message: `no verification policy matches ${URI}` },
    ],
    [
      "one key of two verifies",
      [await policy("p", "enforce", ALL, ["bad-1", "good-2"])],
      "ignore",
      { kind: "pass", passed: [{ policy: "p", authority: "good-2", detail: "key good-2" }] },
    ],
    [
      "no key verifies",
      [await policy("p", "enforce", ALL, ["bad-1", "bad-2"])],
      "ignore",
      {
        kind: "fail",
        policy: "p",
        message:
          'verification policy ns/p: no authority verified it ("bad-1": signature does not verify; "bad-2": signature does not verify)',
      },
    ],
    [
      "a key that cannot be used fails the policy even if another verifies",
      [await policy("p", "enforce", ALL, ["good-1", "broken-2"])],
      "ignore",
      {
        kind: "fail",
        policy: "p",
        message: 'verification policy ns/p: authority "broken-2": Secret ns/keys not found',
      },
    ],
    [
      "every enforce policy must pass",
      [await policy("a", "enforce", ALL, ["good-1"]), await policy("b", "enforce", ALL, ["bad-1"])],
      "ignore",
      {
        kind: "fail",
        policy: "b",
        message: 'verification policy ns/b: no authority verified it ("bad-1": signature does not verify)',
      },
    ],
    [
      "a failing warn policy warns once enforce passed",
      [await policy("w", "warn", ALL, ["bad-1"]), await policy("e", "enforce", ALL, ["good-1"])],
      "ignore",
      {
        kind: "warn",
        policy: "w",
        message: 'verification policy ns/w: no authority verified it ("bad-1": signature does not verify)',
        passed: [{ policy: "e", authority: "good-1", detail: "key good-1" }],
      },
    ],
    [
      "warn policies only, passing: pass",
      [await policy("w", "warn", ALL, ["good-1"])],
      "fail",
      { kind: "pass", passed: [{ policy: "w", authority: "good-1", detail: "key good-1" }] },
    ],
    [
      "an unusable policy that covers the source fails it",
      [await policy("p", "enforce", ALL, ["good-1"], 'spec.mode is "x"')],
      "ignore",
      { kind: "fail", policy: "p", message: 'verification policy ns/p cannot be applied: spec.mode is "x"' },
    ],
  ];
  for (const [what, policies, noMatch, want] of rows)
    assert.deepEqual(await decideVerification(URI, policies, noMatch, check), want, what);
});

test("the verdict does not depend on the order policies are listed in", async () => {
  const a = await policy("a", "enforce", ALL, ["bad-1"]);
  const b = await policy("b", "enforce", ALL, ["broken-1"]);
  const one = await decideVerification(URI, [a, b], "ignore", check);
  const two = await decideVerification(URI, [b, a], "ignore", check);
  assert.deepEqual(one, two);
});
