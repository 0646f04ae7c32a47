import assert from "node:assert/strict";
import { test } from "node:test";
import type { ResolutionRequest } from "@quarry/api";
import type { Lease } from "@quarry/kube";
import {
  crdFindings,
  doctorFindings,
  exitCodeOf,
  formatFindings,
  type Observed,
  optInFindings,
  REQUIRED_CRDS,
  type RoleBinding,
  serviceFindings,
  tektonResolversFinding,
} from "./doctor.ts";
import type { Deployment } from "./version.ts";

const NOW = Date.parse("2026-01-01T00:00:00Z");
const ago = (s: number) => new Date(NOW - s * 1000).toISOString();

function lease(
  name: string,
  service: string,
  kind: "bucket" | "member",
  holder: string | undefined,
  renewedAgo: number,
): Lease {
  return {
    metadata: { name, labels: { "quarry.dev/service": service, "quarry.dev/lease": kind } },
    spec: { ...(holder && { holderIdentity: holder }), renewTime: ago(renewedAgo), leaseDurationSeconds: 15 },
  };
}

function deployment(name: string, service: string, replicas: number, ready: number): Deployment {
  return {
    metadata: { name, namespace: "quarry-system", labels: { "app.kubernetes.io/name": service } },
    spec: { replicas },
    status: { readyReplicas: ready },
  };
}

function observed(over: Partial<Observed> = {}): Observed {
  return {
    systemNamespace: "quarry-system",
    crds: Object.fromEntries(Object.keys(REQUIRED_CRDS).map((n) => [n, true])),
    policies: { "ValidatingAdmissionPolicy/a": true },
    deployments: [],
    leases: [],
    tektonResolvers: undefined,
    requests: [],
    roleBindings: [],
    ...over,
  };
}

test("CRDs: Quarry's requests missing fails, a feature's CRD missing warns", () => {
  const crds = Object.fromEntries(Object.keys(REQUIRED_CRDS).map((n) => [n, true]));
  assert.ok(crdFindings(crds).every((f) => f.level === "ok"));
  const missing = crdFindings({
    ...crds,
    "resolutionrequests.resolution.tekton.dev": false,
    "customruns.tekton.dev": false,
  });
  assert.equal(missing.find((f) => f.message.startsWith("resolutionrequests"))?.level, "fail");
  assert.equal(missing.find((f) => f.message.startsWith("customruns"))?.level, "warn");
  assert.equal(exitCodeOf(missing), 1);
});

test("buckets: every bucket held by a live replica is ok; an expired or missing one fails", () => {
  const svc = "git-resolver";
  const dep = deployment("quarry-git-resolver", svc, 2, 2);
  const held = [
    lease(`${svc}.00-of-02`, svc, "bucket", "pod-a", 3),
    lease(`${svc}.01-of-02`, svc, "bucket", "pod-b", 3),
    lease(`${svc}.member.aaa`, svc, "member", "pod-a", 1),
  ];
  const ok = serviceFindings(observed({ deployments: [dep], leases: held }), NOW);
  assert.deepEqual(
    ok.filter((f) => f.check === "resolver git").map((f) => [f.level, f.message]),
    [["ok", "git-resolver: 2 of 2 buckets held by 2 live replicas"]],
  );
  const expired = [held[0]!, lease(`${svc}.01-of-02`, svc, "bucket", "pod-b", 60)];
  const bad = serviceFindings(observed({ deployments: [dep], leases: expired }), NOW).find(
    (f) => f.check === "resolver git",
  );
  assert.equal(bad?.level, "fail");
  assert.match(bad?.message ?? "", /bucket 01 of 2 held by no live replica/);
});

test("no buckets: a Deployment's ready replicas decide; types nobody serves warn; nothing found warns", () => {
  const ready = serviceFindings(
    observed({ deployments: [deployment("quarry-cluster-resolver", "cluster-resolver", 1, 1)] }),
    NOW,
  );
  assert.equal(ready.find((f) => f.check === "resolver cluster")?.level, "ok");
  assert.equal(ready.find((f) => f.check === "resolver git")?.level, "warn", "git has no Deployment");
  const down = serviceFindings(
    observed({ deployments: [deployment("quarry-cluster-resolver", "cluster-resolver", 1, 0)] }),
    NOW,
  );
  assert.equal(down.find((f) => f.check === "resolver cluster")?.level, "fail");
  const none = serviceFindings(observed(), NOW);
  assert.deepEqual(
    none.map((f) => f.level),
    ["warn"],
  );
  assert.match(none[0]!.hint ?? "", /--system-namespace/);
});

test("Tekton's resolvers: absent or scaled to zero is ok; running beside Quarry's resolvers warns", () => {
  const quarry = [deployment("quarry-git-resolver", "git-resolver", 1, 1)];
  assert.equal(tektonResolversFinding(undefined, quarry).level, "ok");
  const tekton = (replicas: number): Deployment => ({ metadata: { name: "t" }, spec: { replicas } });
  assert.equal(tektonResolversFinding(tekton(0), quarry).level, "ok");
  const both = tektonResolversFinding(tekton(1), quarry);
  assert.equal(both.level, "warn");
  assert.match(both.hint ?? "", /scale tekton-pipelines-remote-resolvers to 0/);
  assert.equal(tektonResolversFinding(tekton(1), []).level, "ok");
  assert.equal(tektonResolversFinding({ unreadable: "forbidden" }, quarry).level, "warn");
});

test("opt-ins: a namespace whose requests name a credential without the RoleBinding is named, once", () => {
  const rr = (ns: string, type: string, params: Record<string, string>): ResolutionRequest => ({
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: { name: `r-${Math.random()}`, namespace: ns, labels: { "resolution.tekton.dev/type": type } },
    spec: { params: Object.entries(params).map(([name, value]) => ({ name, value })) },
  });
  const requests = [
    rr("team-a", "git", { url: "u", gitToken: "t" }),
    rr("team-a", "git", { url: "u", gitToken: "t" }),
    rr("team-b", "git", { url: "u", gitToken: "t" }),
    rr("team-c", "git", { url: "u" }),
    rr("team-d", "pipe", { pipe: "p" }),
  ];
  const bindings: RoleBinding[] = [
    {
      metadata: { name: "x", namespace: "team-b" },
      roleRef: { kind: "ClusterRole", name: "quarry-git-resolver-tokens" },
    },
  ];
  const findings = optInFindings(requests, bindings, "quarry-system");
  assert.deepEqual(
    findings.map((f) => [f.check, f.message.split(":")[0]]),
    [
      [
        "opt-in team-a",
        "2 git requests in team-a name gitToken without a RoleBinding to ClusterRole quarry-git-resolver-tokens",
      ],
      [
        "opt-in team-d",
        "1 pipe request in team-d without a RoleBinding to ClusterRole quarry-pipe-resolver-namespace",
      ],
    ],
  );
  assert.match(findings[0]!.hint ?? "", /--serviceaccount=quarry-system:quarry-git-resolver$/);
  assert.deepEqual(
    optInFindings([], [], "q").map((f) => f.level),
    ["ok"],
  );
});

test("the report: one line per finding, hints below; exit 1 only on a fail", () => {
  const findings = doctorFindings(
    observed({ deployments: [deployment("quarry-git-resolver", "git-resolver", 1, 1)] }),
    NOW,
  );
  const text = formatFindings(findings);
  assert.match(text, /^\[ok\] {3}crds\s+resolutionrequests\.resolution\.tekton\.dev is served$/m);
  assert.match(text, /^\s+→ enable the cluster resolver/m);
  assert.equal(exitCodeOf(findings), 0);
});
