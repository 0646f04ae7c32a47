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
