// run-controller-config: strict parsing of the enforcement settings (global
// keys and the per-kind `kinds` list) and how a run's target picks its policy.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError } from "@quarry/kube";
import {
  defaultRunControllerConfig,
  type EnforcementPolicy,
  type KindPolicy,
  parseRunControllerConfig,
  policyFor,
  type RunControllerConfig,
} from "./config.ts";

const parse = (data: Record<string, string>) => parseRunControllerConfig(data, defaultRunControllerConfig);

test("defaults: enabled, 30s initial-update timeout, 30s grace, 60m default timeout, no kinds", () => {
  assert.deepEqual(defaultRunControllerConfig, {
    defaults: { enabled: true, initialUpdateTimeoutMs: 30_000, graceMs: 30_000 },
    kinds: [],
    defaultTimeoutMs: 60 * 60_000,
  });
  assert.deepEqual(parse({}), defaultRunControllerConfig);
});

interface KeyRow {
  name: string;
  data: Record<string, string>;
  want: RunControllerConfig;
}

const D = defaultRunControllerConfig;
const keyRows: KeyRow[] = [
  {
    name: "enforcement: disabled",
    data: { enforcement: "disabled" },
    want: { ...D, defaults: { ...D.defaults, enabled: false } },
  },
  {
    name: "enforcement: false",
    data: { enforcement: "false" },
    want: { ...D, defaults: { ...D.defaults, enabled: false } },
  },
  { name: "enforcement: enabled", data: { enforcement: "enabled" }, want: D },
  { name: "enforcement: true (surrounding space ignored)", data: { enforcement: " true\n" }, want: D },
  {
    name: "initial-update-timeout",
    data: { "initial-update-timeout": "1m30s" },
    want: { ...D, defaults: { ...D.defaults, initialUpdateTimeoutMs: 90_000 } },
  },
  {
    name: "enforcement-grace",
    data: { "enforcement-grace": "5s" },
    want: { ...D, defaults: { ...D.defaults, graceMs: 5_000 } },
  },
  {
    name: "default-timeout",
    data: { "default-timeout": "2h" },
    want: { ...D, defaultTimeoutMs: 2 * 3_600_000 },
  },
  { name: "kinds: empty value is no kinds", data: { kinds: "" }, want: D },
];

for (const row of keyRows) {
  test(`config key ${row.name}`, () => {
    assert.deepEqual(parse(row.data), row.want);
  });
}

test("parsing starts from the given defaults: unset keys keep them", () => {
  const base: RunControllerConfig = {
    defaults: { enabled: false, initialUpdateTimeoutMs: 1_000, graceMs: 2_000 },
    kinds: [{ kind: "Wait", enabled: true }],
    defaultTimeoutMs: 3_000,
  };
  assert.deepEqual(parseRunControllerConfig({ "enforcement-grace": "4s" }, base), {
    ...base,
    defaults: { ...base.defaults, graceMs: 4_000 },
  });
});

test("kinds: a YAML list with per-kind overrides, each only what it sets", () => {
  const got = parse({
    kinds: [
      "- group: wait.testing.tekton.dev",
      "  kind: Wait",
      "  enforcement: disabled",
      "- kind: Approval",
      "  initial-update-timeout: 2m",
      "  enforcement-grace: 10s",
      "- kind: Pipe",
      "  group: quarry.dev",
      "  enforcement: false",
      "- kind: Other",
      "  enforcement: true",
    ].join("\n"),
  });
  const want: KindPolicy[] = [
    { kind: "Wait", group: "wait.testing.tekton.dev", enabled: false },
    { kind: "Approval", initialUpdateTimeoutMs: 120_000, graceMs: 10_000 },
    { kind: "Pipe", group: "quarry.dev", enabled: false },
    { kind: "Other", enabled: true },
  ];
  assert.deepEqual(got.kinds, want);
  assert.deepEqual(got.defaults, D.defaults);
});

interface BadRow {
  name: string;
  data: Record<string, string>;
  /** ConfigError.key */
  key: string;
  /** A part of the message. */
  says: string;
}

const badRows: BadRow[] = [
  { name: "unknown key", data: { "enforcement-grce": "5s" }, key: "enforcement-grce", says: "unknown key" },
  { name: "bad enforcement", data: { enforcement: "on" }, key: "enforcement", says: '"on"' },
  {
    name: "bad initial-update-timeout",
    data: { "initial-update-timeout": "soon" },
    key: "initial-update-timeout",
    says: "soon",
  },
  {
    name: "zero enforcement-grace",
    data: { "enforcement-grace": "0s" },
    key: "enforcement-grace",
    says: "positive",
  },
  {
    name: "unit-less default-timeout",
    data: { "default-timeout": "60" },
    key: "default-timeout",
    says: "60",
  },
  { name: "kinds not YAML", data: { kinds: "- kind: [Wait" }, key: "kinds", says: "not YAML" },
  { name: "kinds not a list", data: { kinds: "kind: Wait" }, key: "kinds", says: "YAML list" },
  { name: "kinds entry without kind", data: { kinds: "- group: x.dev" }, key: "kinds[0]", says: "kind" },
  { name: "kinds entry that is a bare string", data: { kinds: "- Wait" }, key: "kinds[0]", says: "kind" },
  {
    name: "kinds entry with an unknown field",
    data: { kinds: "- kind: Wait\n- kind: Pipe\n  grace: 5s" },
    key: "kinds[1]",
    says: 'unknown field "grace"',
  },
  {
    name: "kinds entry with a bad enforcement",
    data: { kinds: "- kind: Wait\n  enforcement: sometimes" },
    key: "kinds[0].enforcement",
    says: '"sometimes"',
  },
  {
    name: "kinds entry with a bad initial-update-timeout",
    data: { kinds: "- kind: Wait\n  initial-update-timeout: later" },
    key: "kinds[0].initial-update-timeout",
    says: "later",
  },
  {
    name: "kinds entry with a zero enforcement-grace",
    data: { kinds: "- kind: Wait\n  enforcement-grace: 0s" },
    key: "kinds[0].enforcement-grace",
    says: "positive",
  },
];

for (const row of badRows) {
  test(`config error: ${row.name} → ConfigError for ${row.key}`, () => {
    assert.throws(
      () => parse(row.data),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError, String(err));
        assert.equal(err.key, row.key);
        assert.ok(err.message.includes(row.says), err.message);
        return true;
      },
    );
  });
}

const withKinds = (kinds: KindPolicy[]): RunControllerConfig => ({ ...D, kinds });
const policy = (p: Partial<EnforcementPolicy>): EnforcementPolicy => ({ ...D.defaults, ...p });

interface PolicyRow {
  name: string;
  kinds: KindPolicy[];
  target: { apiVersion: string | undefined; kind: string | undefined };
  want: EnforcementPolicy;
}

const WAIT = { apiVersion: "wait.testing.tekton.dev/v1beta1", kind: "Wait" };
const policyRows: PolicyRow[] = [
  { name: "no kinds: the defaults", kinds: [], target: WAIT, want: D.defaults },
  {
    name: "an entry for another kind: the defaults",
    kinds: [{ kind: "Approval", enabled: false }],
    target: WAIT,
    want: D.defaults,
  },
  {
    name: "group match: its overrides over the defaults",
    kinds: [{ group: "wait.testing.tekton.dev", kind: "Wait", graceMs: 1_000 }],
    target: WAIT,
    want: policy({ graceMs: 1_000 }),
  },
  {
    name: "same kind in another group: no match",
    kinds: [{ group: "example.dev", kind: "Wait", enabled: false }],
    target: WAIT,
    want: D.defaults,
  },
  {
    name: "an entry without group matches the kind in any group",
    kinds: [{ kind: "Wait", enabled: false }],
    target: WAIT,
    want: policy({ enabled: false }),
  },
  {
    name: "the first matching entry wins",
    kinds: [
      { group: "example.dev", kind: "Wait", graceMs: 1 },
      { kind: "Wait", initialUpdateTimeoutMs: 2_000 },
      { group: "wait.testing.tekton.dev", kind: "Wait", enabled: false },
    ],
    target: WAIT,
    want: policy({ initialUpdateTimeoutMs: 2_000 }),
  },
  {
    name: "a grouped entry never matches a group-less apiVersion",
    kinds: [{ group: "wait.testing.tekton.dev", kind: "Wait", enabled: false }],
    target: { apiVersion: "v1", kind: "Wait" },
    want: D.defaults,
  },
  {
    name: "an any-group entry matches a target without apiVersion",
    kinds: [{ kind: "Wait", enabled: false }],
    target: { apiVersion: undefined, kind: "Wait" },
    want: policy({ enabled: false }),
  },
  {
    name: "a target without kind matches nothing",
    kinds: [{ kind: "Wait", enabled: false }],
    target: { apiVersion: WAIT.apiVersion, kind: undefined },
    want: D.defaults,
  },
];

for (const row of policyRows) {
  test(`policyFor: ${row.name}`, () => {
    assert.deepEqual(policyFor(withKinds(row.kinds), row.target), row.want);
  });
}

test("policyFor works on parsed kinds", () => {
  const config = parse({ kinds: "- kind: Wait\n  group: wait.testing.tekton.dev\n  enforcement-grace: 1m" });
  assert.deepEqual(policyFor(config, WAIT), policy({ graceMs: 60_000 }));
});
