import assert from "node:assert/strict";
import { test } from "node:test";
import { stampAllInOneDigest, stampChartYaml, stampDigest, stampRegistry } from "./stamp.ts";

const DIGEST = `sha256:${"ab".repeat(32)}`;

test("Chart.yaml: version, appVersion and dependency versions; nothing else", () => {
  const chart = `apiVersion: v2
name: quarry
kubeVersion: ">=1.30.0-0"
version: 0.1.0
appVersion: "0.1.0"
dependencies:
  - name: quarry-lib
    version: 0.1.0
    repository: file://../quarry-lib
`;
  assert.equal(
    stampChartYaml(chart, "1.2.3", "quarry"),
    chart
      .replace('version: 0.1.0\nappVersion: "0.1.0"', 'version: 1.2.3\nappVersion: "1.2.3"')
      .replace("    version: 0.1.0", "    version: 1.2.3"),
  );
  assert.throws(() => stampChartYaml("name: x\n", "1.2.3", "x"), /x version: expected one match/);
});

test("values.yaml: global.image.registry and image.digest, comments kept, other registries untouched", () => {
  const values = `service: git-resolver
# defaults
global:
  image:
    # registry host
    registry: ghcr.io
    tag: ""
  tracing:
    otlpEndpoint: ""

image:
  # empty: global.image.registry
  registry: ""
  repository: quarry-dev/git-resolver
  tag: ""
  # pull by digest
  digest: ""
  pullPolicy: IfNotPresent
egress:
  registry: "not this one"
`;
  const stamped = stampDigest(stampRegistry(values, "10.0.0.5:5000", "git"), DIGEST, "git");
  assert.equal(
    stamped,
    values
      .replace("    registry: ghcr.io", "    registry: 10.0.0.5:5000")
      .replace('  digest: ""', `  digest: "${DIGEST}"`),
  );
  assert.throws(() => stampDigest("image:\n  tag: x\n", DIGEST, "x"), /x image.digest/);
  assert.throws(() => stampDigest(values, "sha256:short", "x"), /not a digest/);
  assert.throws(() => stampRegistry("image:\n  registry: x\n", "r", "x"), /global.image.registry/);
});

test("the umbrella's allInOne.image.digest, and no other digest", () => {
  const values = `global:
  image:
    registry: ghcr.io
allInOne:
  image:
    registry: ""
    repository: quarry-dev/all-in-one
    digest: ""
  resources:
    digest: "not this one"
lifecycle-controller:
  enabled: true
`;
  assert.equal(
    stampAllInOneDigest(values, DIGEST, "quarry"),
    values.replace('    digest: ""', `    digest: "${DIGEST}"`),
  );
  assert.throws(() => stampAllInOneDigest("image:\n  digest: x\n", DIGEST, "x"), /x allInOne.image.digest/);
});
