// Bundles written by the real `tkn bundle push` resolve through Quarry: a
// Task, a Pipeline, a bundle holding both, by tag and by digest, with Tekton's
// annotations and refSource, the kind matched case-insensitively, and the
// seed's `bundle` resolver label accepted as an alias.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ResolutionRequest } from "@quarry/api";
import { tknBundlePush } from "@quarry/devcluster/registry";
import {
  PIPELINE_YAML,
  reasonOf,
  resolveBundle,
  TASK_YAML,
  taskYaml,
  useBundleScenario,
} from "@quarry/harness/bundle-scenario";
import { dataOf, resolvedOk } from "@quarry/harness/scenario";
import yaml from "js-yaml";

const objectOf = (rr: ResolutionRequest) => yaml.load(dataOf(rr));

const digests: Record<string, string> = {};
const bundles = useBundleScenario("bundle", {
  setup: async ({ registry }) => {
    digests.task = (await tknBundlePush(registry.ref("team/task:v1"), [TASK_YAML])).digest;
    digests.pipeline = (await tknBundlePush(registry.ref("team/pipeline:v1"), [PIPELINE_YAML])).digest;
    digests.both = (
      await tknBundlePush(registry.ref("team/both:v1"), [taskYaml("lint"), PIPELINE_YAML])
    ).digest;
  },
});

test("a Task bundle by tag: data, Tekton's annotations, refSource with the manifest digest", async () => {
  const { scn, registry } = bundles();
  const rr = await resolveBundle(scn, "task-tag", { bundle: registry.ref("team/task:v1"), name: "build" });
  assert.ok(resolvedOk(rr), JSON.stringify(rr.status?.conditions));
  // tkn stores each object as JSON; the bytes are served as the bundle holds them
  assert.deepEqual(objectOf(rr), yaml.load(TASK_YAML));
  assert.deepEqual(
    Object.fromEntries(
      Object.entries(rr.status?.annotations ?? {}).filter(([k]) =>
        k.startsWith("resolution.tekton.dev/dev."),
      ),
    ),
    {
      "resolution.tekton.dev/dev.tekton.image.kind": "task",
      "resolution.tekton.dev/dev.tekton.image.name": "build",
      "resolution.tekton.dev/dev.tekton.image.apiVersion": "v1",
    },
  );
  assert.deepEqual(rr.status?.refSource, {
    uri: `${registry.host}/team/task`,
    digest: { sha256: digests.task?.slice("sha256:".length) },
    entryPoint: "build",
  });
});

test("a Pipeline bundle by digest, kind given in any case", async () => {
  const { scn, registry } = bundles();
  const rr = await resolveBundle(scn, "pipeline-digest", {
    bundle: `${registry.host}/team/pipeline@${digests.pipeline}`,
    name: "ci",
    kind: "Pipeline",
  });
  assert.ok(resolvedOk(rr), JSON.stringify(rr.status?.conditions));
  assert.deepEqual(objectOf(rr), yaml.load(PIPELINE_YAML));
  assert.equal(rr.status?.refSource?.digest?.sha256, digests.pipeline?.slice("sha256:".length));
});

test("a bundle holding a Task and a Pipeline serves each by kind and name", async () => {
  const { scn, registry } = bundles();
  const bundle = registry.ref("team/both:v1");
  const task = await resolveBundle(scn, "both-task", { bundle, name: "lint" });
  const pipeline = await resolveBundle(scn, "both-pipeline", { bundle, name: "ci", kind: "pipeline" });
  assert.ok(resolvedOk(task) && resolvedOk(pipeline));
  assert.deepEqual(objectOf(task), yaml.load(taskYaml("lint")));
  assert.deepEqual(objectOf(pipeline), yaml.load(PIPELINE_YAML));
  const wrongKind = await resolveBundle(scn, "both-wrong-kind", { bundle, name: "ci" });
  assert.equal(reasonOf(wrongKind), "NotFound");
  assert.match(
    wrongKind.status?.conditions?.[0]?.message ?? "",
    /no task named "ci" .* it holds task\/lint, pipeline\/ci/,
  );
});

test("the seed's `bundle` resolver label works as an alias", async () => {
  const { scn, registry } = bundles();
  const rr = await resolveBundle(
    scn,
    "alias",
    { bundle: registry.ref("team/task:v1"), name: "build" },
    { "resolution.tekton.dev/resolver": "bundle" },
  );
  assert.ok(resolvedOk(rr), JSON.stringify(rr.status?.conditions));
  assert.equal(rr.metadata.labels?.["resolution.tekton.dev/type"], "bundles");
});
