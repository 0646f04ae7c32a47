// Quarry against Tekton Pipelines' own resolvers (v1.15's `resolvers` process), differentially:
// the same ResolutionRequests answered by Tekton's (Quarry's resolvers not running), then by
// Quarry's (Tekton's stopped), compared field by field (@quarry/harness/tekton-differential):
// data byte for byte, refSource and source, the resolution.tekton.dev/* annotations Tekton sets,
// the Succeeded condition; for failures the condition's status and reason, both terminal.
// git in url mode (branch, commit), bundles (tag, digest), cluster, http (with and without digest)
// and hub (Artifact Hub by version and constraint, Tekton Hub, a request's own `url`), each with
// failures. Where the docs say the two differ (docs/tekton-drop-in.md §5, §6), the comparison
// steps around it and says so.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import { applyObject } from "@quarry/devcluster/apply";
import { RepoBuilder } from "@quarry/devcluster/git-repos";
import { tknBundlePush } from "@quarry/devcluster/registry";
import { hubTask } from "@quarry/harness/hub-scenario";
import { dataOf, succeeded } from "@quarry/harness/scenario";
import {
  type DifferentialCase,
  expectSameAnswer,
  expectSameFailure,
  type ResolverType,
  useDifferential,
} from "@quarry/harness/tekton-differential";
import type { KubeObject } from "@quarry/kube";
import yaml from "js-yaml";

/** A Task whose script says where it came from. */
const taskYaml = (from: string) => `apiVersion: tekton.dev/v1
kind: Task
metadata:
  name: build
spec:
  params:
    - name: target
      type: string
      default: all
  steps:
    - name: build
      image: busybox
      script: echo build from ${from}
`;
const PIPELINE_YAML = `apiVersion: tekton.dev/v1
kind: Pipeline
metadata:
  name: ci
spec:
  tasks:
    - name: build
      taskRef:
        name: build
`;
const sha256 = (s: string | Buffer) => createHash("sha256").update(s).digest("hex");

let commit = "";
let bundleDigest = "";
let otherNamespace = "";

const differential = useDifferential("tekton-diff", {
  setup: async ({ scn, git, registry, web, hubs }) => {
    const repo = await RepoBuilder.create(git.root, "defs.git");
    repo.write("tasks/build.yaml", taskYaml("git")).write("pipelines/ci.yaml", PIPELINE_YAML);
    commit = await repo.commit("definitions");
    await repo.push();
    repo.dispose();
    bundleDigest = (await tknBundlePush(registry.ref("team/defs:v1"), [taskYaml("bundles"), PIPELINE_YAML]))
      .digest;
    otherNamespace = await scn.extraNamespace("tekton-diff-other");
    for (const namespace of [scn.namespace, otherNamespace]) {
      const obj = yaml.load(taskYaml("cluster")) as KubeObject;
      await applyObject(scn.admin, { ...obj, metadata: { ...obj.metadata, namespace } });
    }
    web.route("/tasks/build.yaml", (_q, res) => res.end(taskYaml("http")));
    const [hub, other] = hubs;
    const versions = (name: string, vs: string[], prerelease = "") =>
      vs.map((v) => ({ version: v, prerelease: v === prerelease, yaml: hubTask(name, v) }));
    hub.add({
      hub: "artifact",
      catalog: "tekton-catalog-tasks",
      kind: "task",
      name: "git-clone",
      versions: versions("git-clone", ["0.1.0", "0.2.0", "0.2.1", "0.3.0-rc.1", "0.3.0"], "0.3.0-rc.1"),
    });
    hub.add({
      hub: "tekton",
      catalog: "Tekton",
      kind: "task",
      name: "golang-build",
      versions: versions("golang-build", ["0.1", "0.3", "0.4"]),
    });
    other.add({
      hub: "artifact",
      catalog: "tekton-catalog-tasks",
      kind: "task",
      name: "lint",
      versions: versions("lint", ["0.1.0"]),
    });
  },
  // Tekton reads every namespace unless told, Quarry only the request's own (docs §5,
  // cluster-resolver-config): both allow exactly the request's namespace here
  config: ({ scn }) => ({ "cluster-resolver-config": { "allowed-namespaces": scn.namespace } }),
  // as on Tekton's Deployment (trailing `/`), for both sides
  env: ({ hubs }) => ({ ARTIFACT_HUB_API: `${hubs[0].base}/`, TEKTON_HUB_API: `${hubs[0].base}/` }),
  cases: ({ scn, git: server, registry, web, hubs }): DifferentialCase[] => {
    const url = server.url("defs.git");
    const file = `${web.base}/tasks/build.yaml`;
    const git = (revision: string, pathInRepo: string) => ({ url, revision, pathInRepo });
    const bundle = (ref: string, name: string, kind = "task") => ({ bundle: registry.ref(ref), name, kind });
    const cluster = (name: string, namespace = scn.namespace) => ({ kind: "task", name, namespace });
    const rows: [string, ResolverType, Record<string, string>][] = [
      ["git-branch", "git", git("main", "tasks/build.yaml")],
      ["git-commit", "git", git(commit, "pipelines/ci.yaml")],
      ["git-no-file", "git", git("main", "tasks/absent.yaml")],
      ["git-no-branch", "git", git("absent", "tasks/build.yaml")],
      ["bundles-tag", "bundles", bundle("team/defs:v1", "build")],
      ["bundles-digest", "bundles", bundle(`team/defs@${bundleDigest}`, "ci", "pipeline")],
      ["bundles-no-name", "bundles", bundle("team/defs:v1", "absent")],
      ["cluster-task", "cluster", cluster("build")],
      ["cluster-no-task", "cluster", cluster("absent")],
      ["cluster-not-allowed", "cluster", cluster("build", otherNamespace)],
      ["http-plain", "http", { url: file }],
      ["http-digest", "http", { url: file, digest: `sha256:${sha256(taskYaml("http"))}` }],
      ["http-digest-mismatch", "http", { url: file, digest: `sha256:${sha256("other\n")}` }],
      ["http-not-found", "http", { url: `${web.base}/tasks/absent.yaml` }],
      ["hub-artifact-exact", "hub", { name: "git-clone", version: "0.2" }],
      ["hub-artifact-constraint", "hub", { name: "git-clone", version: ">= 0.1.0, < 0.3.0" }],
      ["hub-tekton", "hub", { type: "tekton", name: "golang-build", version: "0.3.0" }],
      ["hub-url-param", "hub", { name: "lint", version: "0.1.0", url: hubs[1].base }],
      ["hub-no-version", "hub", { name: "git-clone", version: "0.9.0" }],
    ];
    return rows.map(([name, type, params]) => ({ name, type, params }));
  },
});

/** `v` without empty objects and arrays, at any depth. */
function withoutEmpty(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutEmpty);
  if (v === null || typeof v !== "object") return v;
  const kept = Object.entries(v).map(([k, x]) => [k, withoutEmpty(x)] as const);
  const empty = (x: unknown) => typeof x === "object" && x !== null && Object.keys(x).length === 0;
  return Object.fromEntries(kept.filter(([, x]) => !empty(x)));
}

/** Runs `check` on each named case, collecting every disagreement before failing. */
function compare(names: string[], check: (name: string) => void): void {
  const errors: string[] = [];
  for (const name of names) {
    try {
      check(name);
    } catch (err) {
      errors.push(err instanceof Error ? err.message : String(err));
    }
  }
  assert.deepEqual(errors, [], errors.join("\n\n"));
}

const answers = (name: string) => {
  const a = differential().answers.get(name);
  if (!a) throw new Error(`no case ${name}`);
  return a;
};

test("git, url mode: a branch and a commit answered alike; a missing file and branch fail alike", () => {
  compare(["git-branch", "git-commit"], (n) => expectSameAnswer(n, answers(n)));
  compare(["git-no-file", "git-no-branch"], (n) => expectSameFailure(n, answers(n)));
});

test("bundles: by tag and by digest answered alike; a name the bundle lacks fails alike", () => {
  compare(["bundles-tag", "bundles-digest"], (n) => expectSameAnswer(n, answers(n)));
  compare(["bundles-no-name"], (n) => expectSameFailure(n, answers(n)));
});

test("cluster: the same Task and refSource uri (data and digest differ, §6); missing and not allowed fail alike", () => {
  // docs/tekton-drop-in.md §6, "refSource and digests": Tekton returns the stored object whole with
  // its Checksum() as digest, Quarry the object without this cluster's copy metadata and the
  // sha256 of exactly those bytes. The same definition either way: kind, name and spec, once the
  // empty values Tekton's Go types write out (a step's `computeResources: {}`) are left out.
  compare(["cluster-task"], (n) => {
    const { tekton, quarry } = answers(n);
    expectSameAnswer(n, { tekton, quarry }, { dataAndDigestDiffer: true });
    const doc = (s: string) => {
      const { kind, metadata, spec } = yaml.load(s) as KubeObject & { spec: unknown };
      return { kind, name: metadata.name, spec: withoutEmpty(spec) };
    };
    assert.deepEqual(doc(dataOf(quarry)), doc(dataOf(tekton)), `${n}: the definition`);
    const data = Buffer.from(quarry.status?.data ?? "", "base64");
    assert.equal(quarry.status?.refSource?.digest?.sha256, sha256(data), `${n}: Quarry's digest`);
  });
  compare(["cluster-no-task", "cluster-not-allowed"], (n) => expectSameFailure(n, answers(n)));
  // the refusal is Tekton's message (docs §5, allowed-namespaces), Quarry's saying more after it
  const refusal = `access to specified namespace ${otherNamespace} is not allowed`;
  const { tekton, quarry } = answers("cluster-not-allowed");
  for (const [side, rr] of [
    ["Tekton", tekton],
    ["Quarry", quarry],
  ] as const)
    assert.ok(succeeded(rr)?.message?.includes(refusal), `${side}'s message: ${succeeded(rr)?.message}`);
});

test("http: with and without digest answered alike; a digest mismatch and a 404 fail alike", () => {
  // docs/tekton-drop-in.md §5, http: Quarry adds the url annotation, and caches a request whose
  // digest pins the content (with Tekton's cache annotations), where Tekton's resolver caches nothing
  const additive = ["url", "cached", "cache-operation", "cache-resolver-type", "cache-timestamp"];
  compare(["http-plain", "http-digest"], (n) =>
    expectSameAnswer(n, answers(n), { additive: additive.map((k) => `resolution.tekton.dev/${k}`) }),
  );
  compare(["http-digest-mismatch", "http-not-found"], (n) => expectSameFailure(n, answers(n)));
});

test("hub: Artifact Hub by version and constraint, Tekton Hub, a url param answered alike; no such version fails alike", () => {
  compare(["hub-artifact-exact", "hub-artifact-constraint", "hub-tekton", "hub-url-param"], (n) =>
    expectSameAnswer(n, answers(n)),
  );
  compare(["hub-no-version"], (n) => expectSameFailure(n, answers(n)));
});
