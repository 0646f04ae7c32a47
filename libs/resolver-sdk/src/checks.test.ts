import assert from "node:assert/strict";
import { test } from "node:test";
import { checkKind, checkSize, DEFAULT_ALLOWED_KINDS } from "./checks.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

test("checkKind accepts Tekton kinds and refuses others with a message naming the kind", () => {
  assert.deepEqual(checkKind(bytes("apiVersion: tekton.dev/v1\nkind: Task\n"), DEFAULT_ALLOWED_KINDS, "x"), {
    ok: true,
  });
  assert.deepEqual(
    checkKind(bytes('{"apiVersion":"tekton.dev/v1beta1","kind":"Pipeline"}'), DEFAULT_ALLOWED_KINDS, "x"),
    {
      ok: true,
    },
  );
  const cases: [string, RegExp][] = [
    ["apiVersion: v1\nkind: ConfigMap\n", /is ConfigMap \(apiVersion v1\)/],
    ["apiVersion: tekton.dev/v1\nkind: Trigger\n", /is Trigger/],
    ["just: [unclosed", /is not YAML/],
    ["kind: Task\n---\nkind: Task\n", /holds 2 YAML documents/],
    ["", /holds 0 YAML documents/],
  ];
  for (const [text, want] of cases) {
    const r = checkKind(bytes(text), DEFAULT_ALLOWED_KINDS, "resolved file");
    assert.equal(r.ok, false, text);
    if (!r.ok) {
      assert.equal(r.reason, "UnsupportedKind");
      assert.match(r.message, want);
    }
  }
  assert.equal(checkKind(bytes("apiVersion: tekton.dev/v1\nkind: Task\n"), ["Pipeline"], "x").ok, false);
});

test("checkSize allows exactly 1 MiB and refuses one byte more", () => {
  assert.equal(checkSize(new Uint8Array(1024 * 1024), "x").ok, true);
  const r = checkSize(new Uint8Array(1024 * 1024 + 1), "resolved file");
  assert.equal(r.ok, false);
  if (!r.ok) {
    assert.equal(r.reason, "TooLarge");
    assert.match(r.message, /1048577 bytes/);
  }
});

const task = (extra: string) => `apiVersion: tekton.dev/v1\nkind: Task\nmetadata:\n  name: t\n${extra}`;

/** Nine levels of nine aliases over "lol": 9^9 × 5 bytes (about 1.9 GB) once expanded. */
function billionLaughs(): string {
  const lines = ['  l0: &l0 "lol"'];
  for (let i = 1; i <= 9; i++)
    lines.push(
      `  l${i}: &l${i} [${Array(9)
        .fill(`*l${i - 1}`)
        .join(", ")}]`,
    );
  return task(`spec:\n${lines.join("\n")}\n`);
}

test("checkKind fails a billion-laughs document as TooLarge, quickly and without expanding it", () => {
  const text = billionLaughs();
  assert.ok(text.length < 1000);
  const started = performance.now();
  const r = checkKind(bytes(text), DEFAULT_ALLOWED_KINDS, "resolved file");
  assert.ok(performance.now() - started < 100, "measured on the graph, not expanded");
  assert.equal(r.ok, false);
  if (!r.ok) {
    assert.equal(r.reason, "TooLarge");
    assert.match(
      r.message,
      /resolved file expands to at least \d+ bytes through 81 YAML aliases, over the 1 MiB limit/,
    );
  }
});

test("checkKind fails an alias inside the node it names as TooLarge", () => {
  const r = checkKind(bytes(task("spec: &s\n  self: *s\n")), DEFAULT_ALLOWED_KINDS, "x");
  assert.equal(r.ok, false);
  if (!r.ok) {
    assert.equal(r.reason, "TooLarge");
    assert.match(r.message, /expands without end/);
  }
});

test("checkKind accepts a Task with a few legitimate anchors", () => {
  const text = task(`spec:
  steps:
    - name: build
      image: golang
      env: &env
        - name: GOFLAGS
          value: -mod=vendor
      script: &script |
        go build ./...
    - name: test
      image: golang
      env: *env
      script: *script
    - <<: &base { image: alpine }
      name: lint
`);
  assert.deepEqual(checkKind(bytes(text), DEFAULT_ALLOWED_KINDS, "x"), { ok: true });
});

test("checkKind counts a scalar repeated by aliases: just under 1 MiB passes, just over fails", () => {
  const big = "x".repeat(100 * 1024);
  const doc = (copies: number) =>
    task(
      `  annotations:\n    a0: &big ${big}\n${Array.from({ length: copies }, (_, i) => `    a${i + 1}: *big\n`).join("")}`,
    );
  // 10 × 100 KiB = 1000 KiB once expanded
  assert.deepEqual(checkKind(bytes(doc(9)), DEFAULT_ALLOWED_KINDS, "x"), { ok: true });
  // 11 × 100 KiB = 1100 KiB
  const r = checkKind(bytes(doc(10)), DEFAULT_ALLOWED_KINDS, "x");
  assert.equal(r.ok, false);
  if (!r.ok) assert.equal(r.reason, "TooLarge");
});

test("without aliases the expanded size is the raw size: a document just under 1 MiB passes", () => {
  const text = task(`  annotations:\n    a: ${"x".repeat(1024 * 1024 - 200)}\n`);
  assert.ok(bytes(text).byteLength <= 1024 * 1024);
  assert.deepEqual(checkKind(bytes(text), DEFAULT_ALLOWED_KINDS, "x"), { ok: true });
});
