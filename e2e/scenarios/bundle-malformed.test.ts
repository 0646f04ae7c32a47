// Bundles that break Tekton's bundle contract, and requests that name what a
// bundle or registry does not hold, fail terminally with the reason and a
// message naming the fault: more than 20 layers, a layer missing one of the
// three dev.tekton.image.* annotations, an upper-case kind, a layer tar of two
// files (InvalidBundle); no `name` param (InvalidParams); a name, tag or
// repository that is not there (NotFound). The malformed bundles are
// hand-made OCI layouts pushed byte for byte by crane to a real registry.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ResolutionRequest } from "@quarry/api";
import {
  type LayerSpec,
  TEKTON_API_VERSION,
  TEKTON_KIND,
  TEKTON_NAME,
  tektonLayer,
  tknBundlePush,
} from "@quarry/devcluster/registry";
import { assertFailed, literal } from "@quarry/harness/bundle-assert";
import {
  PIPELINE_YAML,
  pushLayout,
  resolveBundle,
  TASK_YAML,
  taskYaml,
  useBundleScenario,
} from "@quarry/harness/bundle-scenario";
import { dataOf, resolvedOk } from "@quarry/harness/scenario";
import yaml from "js-yaml";

const taskLayer = (name: string): LayerSpec => tektonLayer({ kind: "task", name, content: taskYaml(name) });

const taskLayers = (n: number) => Array.from({ length: n }, (_, i) => taskLayer(`t${i}`));

/** A second layer that lacks `key`: the first layer is fine, so the whole bundle must be judged. */
const missingAnnotation = (key: string): LayerSpec[] => {
  const bad = taskLayer("lint");
  delete bad.annotations?.[key];
  return [taskLayer("build"), bad];
};

const MISSING = [
  { key: TEKTON_API_VERSION, repo: "bad/no-apiversion" },
  { key: TEKTON_KIND, repo: "bad/no-kind" },
  { key: TEKTON_NAME, repo: "bad/no-name" },
];

const bundles = useBundleScenario("bundle-malformed", {
  setup: async ({ registry }) => {
    await Promise.all([
      pushLayout(registry.ref("bad/layers21:v1"), { layers: taskLayers(21) }),
      pushLayout(registry.ref("good/layers20:v1"), { layers: taskLayers(20) }),
      ...MISSING.map(({ key, repo }) =>
        pushLayout(registry.ref(`${repo}:v1`), { layers: missingAnnotation(key) }),
      ),
      pushLayout(registry.ref("bad/upper-kind:v1"), {
        layers: [tektonLayer({ kind: "Task", name: "build", content: TASK_YAML })],
      }),
      pushLayout(registry.ref("bad/two-files:v1"), {
        layers: [
          {
            entries: [
              { name: "build", content: TASK_YAML },
              { name: "extra", content: taskYaml("extra") },
            ],
            gzip: true,
            annotations: { [TEKTON_API_VERSION]: "v1", [TEKTON_KIND]: "task", [TEKTON_NAME]: "build" },
          },
        ],
      }),
      tknBundlePush(registry.ref("good/both:v1"), [TASK_YAML, PIPELINE_YAML]),
    ]);
  },
});

const messageOf = (rr: ResolutionRequest) => rr.status?.conditions?.[0]?.message ?? "";

test("21 layers: InvalidBundle; 20 layers: the last one resolves", async () => {
  const { scn, registry } = bundles();
  const over = registry.ref("bad/layers21:v1");
  // t0 is a perfectly good layer: the layer count alone condemns the bundle
  const rr21 = await resolveBundle(scn, "layers-21", { bundle: over, name: "t0" });
  assertFailed(
    rr21,
    "InvalidBundle",
    new RegExp(`${literal(over)} has 21 layers; a Tekton bundle holds at most 20 objects`),
  );
  const rr20 = await resolveBundle(scn, "layers-20", {
    bundle: registry.ref("good/layers20:v1"),
    name: "t19",
  });
  assert.ok(resolvedOk(rr20), JSON.stringify(rr20.status));
  assert.deepEqual(yaml.load(dataOf(rr20)), yaml.load(taskYaml("t19")));
});

for (const { key, repo } of MISSING) {
  test(`a layer without ${key}: InvalidBundle naming the layer and the annotation`, async () => {
    const { scn, registry } = bundles();
    const bundle = registry.ref(`${repo}:v1`);
    // asks for layer 0, which is intact: a bundle with any bad layer is not a bundle
    const rr = await resolveBundle(scn, `missing-${repo.slice("bad/no-".length)}`, { bundle, name: "build" });
    assertFailed(
      rr,
      "InvalidBundle",
      new RegExp(`layer 1 of ${literal(bundle)} has no ${literal(key)} annotation`),
    );
  });
}

test('kind annotation "Task" (upper case): InvalidBundle, even when asked for kind Task', async () => {
  const { scn, registry } = bundles();
  const rr = await resolveBundle(scn, "upper-kind", {
    bundle: registry.ref("bad/upper-kind:v1"),
    name: "build",
    kind: "Task",
  });
  assertFailed(
    rr,
    "InvalidBundle",
    /layer 0 of .* has dev\.tekton\.image\.kind "Task"; it must be lower-case/,
  );
});

test("a layer tar holding two files: InvalidBundle naming both", async () => {
  const { scn, registry } = bundles();
  const bundle = registry.ref("bad/two-files:v1");
  const rr = await resolveBundle(scn, "two-files", { bundle, name: "build" });
  assertFailed(
    rr,
    "InvalidBundle",
    new RegExp(`task "build" of ${literal(bundle)}: layer tar holds 2 files \\("build", "extra"\\)`),
  );
});

test('no "name" param: InvalidParams from the params schema', async () => {
  const { scn, registry } = bundles();
  const rr = await resolveBundle(scn, "no-name", { bundle: registry.ref("good/both:v1") });
  assert.equal(assertFailed(rr, "InvalidParams"), 'param "name" is required');
});

test("a name the bundle does not hold: NotFound listing what it holds", async () => {
  const { scn, registry } = bundles();
  const bundle = registry.ref("good/both:v1");
  const rr = await resolveBundle(scn, "unknown-name", { bundle, name: "deploy" });
  assertFailed(rr, "NotFound");
  assert.equal(
    messageOf(rr),
    `param "name": no task named "deploy" in ${bundle}; it holds task/build, pipeline/ci`,
  );
});

test("a tag or a repository the registry does not have: NotFound", async () => {
  const { scn, registry } = bundles();
  const [tag, repo] = await Promise.all([
    resolveBundle(scn, "unknown-tag", { bundle: registry.ref("good/both:v9"), name: "build" }),
    resolveBundle(scn, "unknown-repo", { bundle: registry.ref("nobody/here:v1"), name: "build" }),
  ]);
  assertFailed(
    tag,
    "NotFound",
    new RegExp(`${literal(registry.host)}/good/both: manifests v9: not found \\(404\\)`),
  );
  assertFailed(
    repo,
    "NotFound",
    new RegExp(`${literal(registry.host)}/nobody/here: manifests v1: not found \\(404\\)`),
  );
});
