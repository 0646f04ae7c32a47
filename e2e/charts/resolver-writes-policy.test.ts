// The per-resolver status-write policies (libs/api crds.ts resolverWritesPolicy) name each
// resolver by the ServiceAccount its rbac.yaml gives it and allow the types its code serves: a
// renamed ServiceAccount or a new alias would otherwise leave a resolver unchecked, or deny it
// its own requests.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { RESOLVER_SERVICE_ACCOUNTS, resolverTypeNames } from "@quarry/api";
import { BundleResolver } from "@quarry/bundle-resolver/resolver";
import { ClusterResolver } from "@quarry/cluster-resolver/resolver";
import { repoRoot } from "@quarry/devcluster/paths";
import { GitResolver } from "@quarry/git-resolver/resolver";
import { HttpResolver as HttpSourceResolver } from "@quarry/http-resolver/resolver";
import { HubResolver } from "@quarry/hub-resolver/resolver";
import { PipeResolver } from "@quarry/pipe-resolver/resolver";
import type { Resolver } from "@quarry/resolver-sdk";
import { HttpResolver } from "@quarry/resolver-template/resolver";
import yaml from "js-yaml";

// only `type` and `aliases` are read: no dependency is ever called
const RESOLVERS: [chart: string, resolver: Pick<Resolver, "type" | "aliases">][] = [
  ["git-resolver", new GitResolver({} as never)],
  ["bundle-resolver", new BundleResolver({} as never)],
  ["cluster-resolver", new ClusterResolver({})],
  ["pipe-resolver", new PipeResolver({} as never)],
  ["http-resolver", new HttpSourceResolver({} as never)],
  ["hub-resolver", new HubResolver({ artifactHubApi: undefined, tektonHubApi: undefined })],
  ["resolver-template", new HttpResolver()],
];

const serviceAccountOf = (chart: string) =>
  (
    yaml.load(readFileSync(join(repoRoot, "charts", chart, "rbac.yaml"), "utf8")) as {
      serviceAccountName: string;
    }
  ).serviceAccountName;

test("every resolver's ServiceAccount has a status-write policy allowing exactly the types it serves", () => {
  for (const [chart, resolver] of RESOLVERS) {
    const sa = serviceAccountOf(chart);
    const type = RESOLVER_SERVICE_ACCOUNTS[sa];
    assert.ok(
      type,
      `charts/${chart}/rbac.yaml's ServiceAccount ${sa} has no entry in RESOLVER_SERVICE_ACCOUNTS`,
    );
    assert.deepEqual(
      resolverTypeNames(type).sort(),
      [resolver.type, ...(resolver.aliases ?? [])].sort(),
      `${sa}: the policy's types against the resolver's type and aliases`,
    );
  }
  assert.deepEqual(
    Object.keys(RESOLVER_SERVICE_ACCOUNTS).sort(),
    RESOLVERS.map(([chart]) => serviceAccountOf(chart)).sort(),
    "no policy for a ServiceAccount no resolver runs as",
  );
});

test("no other service runs as a resolver's ServiceAccount (it would be held to that resolver's type)", () => {
  for (const chart of ["lifecycle-controller", "run-controller", "wait-task"])
    assert.equal(RESOLVER_SERVICE_ACCOUNTS[serviceAccountOf(chart)], undefined, chart);
});
