import assert from "node:assert/strict";
import { test } from "node:test";
import {
  cleanMountPath,
  dataKeyProblem,
  type FileEntry,
  filesToCopy,
  isUnderMount,
  MAX_PIPE_FILE_BYTES,
  pathProblem,
} from "./files.ts";

test("the cap is KEP-17's 1 MiB", () => {
  assert.equal(MAX_PIPE_FILE_BYTES, 1048576);
});

test("dataKeyProblem: Kubernetes' ConfigMap/Secret key rules", () => {
  const cases: [string, string | undefined][] = [
    ["tls.key", undefined],
    ["MyKey.key", undefined],
    [".hidden", undefined],
    ["a-b_c.d", undefined],
    ["k".repeat(253), undefined],
    ["", "is empty"],
    ["k".repeat(254), "is longer than 253 characters"],
    ["my key", "must match ^[-._a-zA-Z0-9]+$"],
    ["a:b", "must match ^[-._a-zA-Z0-9]+$"],
    ["ключ", "must match ^[-._a-zA-Z0-9]+$"],
    [".", "must not be '.'"],
    ["..", "must not be '..'"],
    ["..data", "must not start with '..'"],
  ];
  for (const [key, want] of cases) assert.equal(dataKeyProblem(key), want, key);
});

test("pathProblem: absolute, clean, a data-key base name", () => {
  const clean = "must be a clean path: no empty, '.' or '..' segments and no trailing '/'";
  const cases: [string, string | undefined][] = [
    ["/tmp/MyKey.key", undefined],
    ["/out/nested/dir/env", undefined],
    ["/x", undefined],
    ["tmp/a", "must be an absolute path"],
    ["", "must be an absolute path"],
    ["/tmp/../etc/passwd", clean],
    ["/tmp/./a", clean],
    ["/tmp//a", clean],
    ["/tmp/dir/", clean],
    ["/tmp/..", clean],
    ["/", clean],
    ["/tmp/my key", "has a file name (after the last '/') that must match ^[-._a-zA-Z0-9]+$"],
    ["/tmp/..hidden", "has a file name (after the last '/') that must not start with '..'"],
    [`/${"a".repeat(1024)}`, "is longer than 1024 characters"],
  ];
  for (const [path, want] of cases) assert.equal(pathProblem(path), want, path);
});

test("isUnderMount: strictly below the mount path, whatever trailing slashes the mount has", () => {
  const cases: [string, string, boolean][] = [
    ["/tmp/a", "/tmp", true],
    ["/tmp/a/b", "/tmp", true],
    ["/tmp/a", "/tmp/", true],
    ["/tmp/a", "/./tmp//", true],
    ["/anything", "/", true],
    ["/tmp", "/tmp", false],
    ["/tmpx/a", "/tmp", false],
    ["/etc/passwd", "/tmp", false],
    ["/out/a", "/out/x", false],
  ];
  for (const [path, mount, want] of cases)
    assert.equal(isUnderMount(path, mount), want, `${path} under ${mount}`);
  assert.equal(cleanMountPath("/out/./x/"), "/out/x");
  assert.equal(cleanMountPath("/"), "/");
});

test("filesToCopy: each entry's format, path and data key, or the first entry outside the mount", () => {
  const mount = { volumeName: "shared-data", mountPath: "/tmp" };
  const entries: FileEntry[] = [
    { file: "/tmp/MyKey.key", kind: "Secret", key: "Mycertificate" },
    { envFile: "/tmp/out/build.env", kind: "ConfigMap", key: "env" },
  ];
  assert.deepEqual(filesToCopy(entries, mount), {
    ok: true,
    files: [
      { key: "Mycertificate", kind: "Secret", path: "/tmp/MyKey.key", format: "file", dataKey: "MyKey.key" },
      { key: "env", kind: "ConfigMap", path: "/tmp/out/build.env", format: "envFile", dataKey: "build.env" },
    ],
  });
  // KEP-17's own example writes the key outside its emptyDir
  assert.deepEqual(
    filesToCopy([...entries, { file: "/usr/share/MyKey.key", kind: "Secret", key: "k" }], mount),
    {
      ok: false,
      index: 2,
      message: 'file "/usr/share/MyKey.key" is outside the emptyDir volume "shared-data", mounted at /tmp',
    },
  );
  assert.deepEqual(filesToCopy([{ envFile: "/tmp/../x", kind: "Secret", key: "k" }], mount), {
    ok: false,
    index: 0,
    message: `envFile "/tmp/../x" must be a clean path: no empty, '.' or '..' segments and no trailing '/'`,
  });
});
