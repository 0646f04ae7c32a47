// The constraint grammar against go-version's own answers: every row's
// expected result is what hashicorp/go-version v1.9.0 (Tekton v1.15's)
// returns for NewConstraint(constraint).Check(NewVersion(version)).
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  compareVersions,
  highestMatch,
  parseConstraint,
  parseVersion,
  satisfiesAll,
  type Version,
  versionString,
} from "./version-constraint.ts";

type Outcome = boolean | "bad constraint" | "bad version";

const CHECKS: [constraint: string, version: string, outcome: Outcome][] = [
  [">= 0.1, < 0.3", "0.2.0", true],
  [">= 0.1, < 0.3", "0.3.0", false],
  [">= 0.1, < 0.3", "0.1", true],
  [">= 0.1, < 0.3", "0.2.9", true],
  ["0.6", "0.6.0", true],
  ["0.6", "0.6", true],
  ["0.6.0", "0.6", true],
  ["0.6", "0.6.1", false],
  ["=0.6", "0.6.0", true],
  ["v0.6", "0.6.0", true],
  ["!= 0.2", "0.2.0", false],
  ["!= 0.2", "0.3.0", true],
  ["> 1.0", "1.0.1", true],
  ["> 1.0", "1.0.0", false],
  ["< 1.0", "0.9.9", true],
  ["<= 1.0", "1.0", true],
  [">= 1.0", "1.0.0-rc.1", false],
  [">= 1.0-rc.1", "1.0.0-rc.2", true],
  [">= 1.0.0-rc.1", "1.0.0-rc.2", true],
  [">= 1.0.0-rc.1", "1.1.0-rc.2", false],
  [">= 1.0.0-rc.1", "1.0.0", true],
  ["= 1.0.0-rc.1", "1.0.0-rc.1", true],
  ["~> 1.2", "1.2.0", true],
  ["~> 1.2", "1.9.0", true],
  ["~> 1.2", "2.0.0", false],
  ["~> 1.2", "1.1.9", false],
  ["~> 1.2.3", "1.2.9", true],
  ["~> 1.2.3", "1.3.0", false],
  ["~> 1.2.3", "1.2.2", false],
  ["~> 1", "1.0.0", true],
  ["~> 1", "5.0.0", true],
  ["~> 1.0", "1.5", true],
  ["~> 1.0.0-beta", "1.0.0-beta.2", true],
  ["~> 1.0.0-beta", "1.0.0", false],
  ["~> 0.2", "0.2.1", true],
  ["1.2.3.4", "1.2.3.4", true],
  ["> 1.2.3", "1.2.3.1", true],
  ["< 1.2.3.1", "1.2.3", true],
  [">1.0,<2.0", "1.5.0", true],
  [" >= 0.1 ", "0.1.0", true],
  ["1.0beta", "1.0.0-beta", true],
  [">= 1.0", "1.1+build.5", true],
  ["= 1.1", "1.1.0+build", true],
  ["1.0.0-rc.10", "1.0.0-rc.10", true],
  ["> 1.0.0-rc.9", "1.0.0-rc.10", true],
  ["> 1.0.0-alpha", "1.0.0-alpha.1", true],
  ["> 1.0.0-alpha.beta", "1.0.0-alpha.1", false],
  ["> 1.0.0-alpha", "1.0.0-beta", true],
  ["latest", "1.0.0", "bad constraint"],
  [">= abc", "1.0.0", "bad constraint"],
  [">= 1.0,", "1.0.0", "bad constraint"],
  [">> 1.0", "1.0.0", "bad constraint"],
  [">= 1.0 || < 0.5", "1.0.0", "bad constraint"],
  ["^1.0", "1.0.0", "bad constraint"],
  ["1.x", "1.0.0", "bad constraint"],
  ["", "1.0.0", "bad constraint"],
  [">= 1.0", "not-a-version", "bad version"],
  [">= 1.0", "9223372036854775808.0.0", "bad version"],
];

test("constraints check versions as go-version does", () => {
  for (const [constraint, version, want] of CHECKS) {
    const cs = parseConstraint(constraint);
    const v = parseVersion(version);
    const got: Outcome =
      "error" in cs ? "bad constraint" : "error" in v ? "bad version" : satisfiesAll(v, cs);
    assert.equal(got, want, `${JSON.stringify(constraint)} on ${JSON.stringify(version)}`);
  }
});

const v = (text: string): Version => {
  const parsed = parseVersion(text);
  if ("error" in parsed) throw new Error(parsed.error);
  return parsed;
};

test("canonical form: padded segments, no v, leading zeros dropped", () => {
  const cases: [string, string][] = [
    ["0.1", "0.1.0"],
    ["v1", "1.0.0"],
    ["1.04.0", "1.4.0"],
    ["1.2.3.4", "1.2.3.4"],
    ["1.0beta", "1.0.0-beta"],
    ["1.0.0-rc.1+build.5", "1.0.0-rc.1+build.5"],
  ];
  for (const [text, want] of cases) assert.equal(versionString(v(text)), want, text);
});

test("ordering: pre-releases before their release, numeric parts before alphanumeric", () => {
  const ascending = [
    "0.9",
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-rc.2",
    "1.0.0-rc.10",
    "1.0",
    "1.0.1",
    "1.2.3.1",
    "2",
  ];
  for (let i = 1; i < ascending.length; i++) {
    const [a, b] = [v(ascending[i - 1] as string), v(ascending[i] as string)];
    assert.equal(compareVersions(a, b), -1, `${ascending[i - 1]} < ${ascending[i]}`);
    assert.equal(compareVersions(b, a), 1, `${ascending[i]} > ${ascending[i - 1]}`);
  }
  assert.equal(compareVersions(v("1.0"), v("1.0.0")), 0);
  assert.equal(compareVersions(v("1.0.0+a"), v("1.0.0+b")), 0);
});

test("the highest match wins, whatever the order the hub lists versions in", () => {
  const listed = ["0.1", "0.3", "0.2.1", "0.2", "0.4.0-rc.1", "0.10"].map((text) => ({
    text,
    version: v(text),
  }));
  const pick = (constraint: string) => {
    const cs = parseConstraint(constraint);
    if ("error" in cs) throw new Error(cs.error);
    return highestMatch(listed, cs)?.text;
  };
  assert.equal(pick(">= 0.1, < 0.3"), "0.2.1");
  assert.equal(pick("~> 0.2"), "0.10");
  assert.equal(pick("~> 0.2.0"), "0.2.1");
  assert.equal(pick(">= 0.4"), "0.10");
  assert.equal(pick("0.2"), "0.2");
  // != and = compare exactly, pre-releases included (the artifact hub's prerelease flag drops them before)
  assert.equal(pick("!= 0.10"), "0.4.0-rc.1");
  assert.equal(pick("> 5"), undefined);
});

test("parse errors say what was malformed", () => {
  assert.deepEqual(parseConstraint(">= 1.0, >> 2"), { error: "malformed constraint:  >> 2" });
  assert.deepEqual(parseVersion("latest"), { error: "malformed version: latest" });
  assert.match((parseVersion("9223372036854775808") as { error: string }).error, /out of range/);
});
