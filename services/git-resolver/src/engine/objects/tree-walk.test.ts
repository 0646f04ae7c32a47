import assert from "node:assert/strict";
import { test } from "node:test";
import { GitSourceError } from "../source.ts";
import { resolveInTree, type TreeEntry, type TreeReader } from "./tree-walk.ts";

/** A tree as a map of full path → entry; symlink targets by oid. */
function fakeTree(
  files: Record<string, string>,
  links: Record<string, string>,
): TreeReader & { lookups: string[] } {
  const entries = new Map<string, TreeEntry>();
  const targets = new Map<string, string>();
  const addDirs = (path: string) => {
    const parts = path.split("/");
    for (let i = 1; i < parts.length; i++)
      entries.set(parts.slice(0, i).join("/"), { mode: "040000", type: "tree", oid: `tree:${i}` });
  };
  for (const [path, oid] of Object.entries(files)) {
    addDirs(path);
    entries.set(path, {
      mode: oid === "submodule" ? "160000" : "100644",
      type: oid === "submodule" ? "commit" : "blob",
      oid,
    });
  }
  for (const [path, target] of Object.entries(links)) {
    addDirs(path);
    entries.set(path, { mode: "120000", type: "blob", oid: `link:${path}` });
    targets.set(`link:${path}`, target);
  }
  const lookups: string[] = [];
  return {
    lookups,
    entry: async (p) => {
      lookups.push(p);
      return entries.get(p);
    },
    linkTarget: async (oid) => targets.get(oid)!,
  };
}

const tree = () =>
  fakeTree(
    { "task.yaml": "t", "tasks/build/task.yaml": "b", "sub/module": "submodule" },
    {
      "links/inside.yaml": "../tasks/build/task.yaml",
      "links/dir": "../tasks",
      "links/chain.yaml": "inside.yaml",
      "links/outside.yaml": "../../outside.yaml",
      "links/absolute.yaml": "/etc/passwd",
      "links/loop-a": "loop-b",
      "links/loop-b": "loop-a",
      "links/dangling.yaml": "../nope.yaml",
      "links/dotdot-inside.yaml": "../tasks/../task.yaml",
      "links/root": "..",
      "links/self": ".",
      "deep/a/b/up.yaml": "../../../task.yaml",
    },
  );

test("resolveInTree: files and symlinks inside the repository", async () => {
  const cases: [string, string, string][] = [
    ["task.yaml", "task.yaml", "t"],
    ["tasks/build/task.yaml", "tasks/build/task.yaml", "b"],
    ["links/inside.yaml", "tasks/build/task.yaml", "b"],
    ["links/chain.yaml", "tasks/build/task.yaml", "b"],
    ["links/dir/build/task.yaml", "tasks/build/task.yaml", "b"],
    ["links/dotdot-inside.yaml", "task.yaml", "t"],
    ["links/root/task.yaml", "task.yaml", "t"],
    ["links/self/inside.yaml", "tasks/build/task.yaml", "b"],
    ["deep/a/b/up.yaml", "task.yaml", "t"],
  ];
  for (const [path, resolved, oid] of cases) {
    const got = await resolveInTree(tree(), path);
    assert.equal(got.path, resolved, path);
    assert.equal(got.entry.oid, oid, path);
  }
});

test("resolveInTree: a plain file costs one lookup", async () => {
  const t = tree();
  await resolveInTree(t, "tasks/build/task.yaml");
  assert.deepEqual(t.lookups, ["tasks/build/task.yaml"]);
});

test("resolveInTree: refusals", async () => {
  const cases: [string, string, RegExp][] = [
    [
      "links/outside.yaml",
      "path-escapes",
      /^symlink "links\/outside\.yaml" points outside the repository \("\.\.\/\.\.\/outside\.yaml"\)$/,
    ],
    ["links/absolute.yaml", "path-escapes", /points outside the repository \("\/etc\/passwd"\)/],
    ["links/loop-a", "symlink-loop", /^more than 16 symlinks resolving "links\/loop-a" \(a loop\?\)$/],
    [
      "links/dangling.yaml",
      "path-not-found",
      /^no such file "links\/dangling\.yaml" \("nope\.yaml" after symlinks\)$/,
    ],
    ["nope.yaml", "path-not-found", /^no such file "nope\.yaml"$/],
    ["tasks/nope/task.yaml", "path-not-found", /no such file/],
    ["task.yaml/x", "path-not-found", /no such file/],
    ["tasks", "not-a-file", /"tasks" is a directory/],
    ["links/dir", "not-a-file", /^"tasks" is a directory \("links\/dir" after symlinks\)$/],
    ["sub/module", "not-a-file", /is a submodule/],
    ["links/root", "not-a-file", /resolves to the repository root/],
  ];
  for (const [path, code, message] of cases) {
    await assert.rejects(resolveInTree(tree(), path), (err: unknown) => {
      assert.ok(err instanceof GitSourceError, String(err));
      assert.equal(err.code, code, path);
      assert.match(err.message, message, path);
      return true;
    });
  }
});
