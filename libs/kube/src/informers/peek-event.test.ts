import assert from "node:assert/strict";
import { test } from "node:test";
import { peekWatchEvent } from "./peek-event.ts";

const line = (v: unknown) => JSON.stringify(v);

test("peek: the key and resourceVersion of a custom resource encoded with sorted keys", () => {
  const event = {
    type: "MODIFIED",
    object: {
      apiVersion: "resolution.tekton.dev/v1beta1",
      kind: "ResolutionRequest",
      metadata: {
        annotations: { name: "decoy-annotation", 'we"ird\\': "}{][" },
        creationTimestamp: "2026-01-01T00:00:00Z",
        generation: 1,
        labels: { name: "decoy-label", "resolution.tekton.dev/type": "git" },
        managedFields: [{ fieldsV1: { "f:metadata": { "f:labels": { "f:name": {} } } }, manager: "x" }],
        name: "git-abc",
        namespace: "team-a",
        ownerReferences: [{ name: "decoy-owner", uid: "u" }],
        resourceVersion: "4711",
        uid: "1234",
      },
      spec: { params: [{ name: "url", value: "https://x/y" }] },
      status: { data: "e30=" },
    },
  };
  assert.deepEqual(peekWatchEvent(line(event)), { key: "team-a/git-abc", resourceVersion: "4711" });
});

test("peek: a typed object's order (kind, apiVersion, metadata first, name first)", () => {
  const text =
    '{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","namespace":"n","resourceVersion":"9"},"data":{"a":"1"}}}';
  assert.deepEqual(peekWatchEvent(text), { key: "n/c", resourceVersion: "9" });
});

test("peek: a cluster-scoped object's key is its name; DELETED is read like the others", () => {
  assert.deepEqual(
    peekWatchEvent(line({ type: "DELETED", object: { kind: "Namespace", metadata: { name: "ns1" } } })),
    { key: "ns1", resourceVersion: undefined },
  );
});

test("peek: what it cannot read is left to JSON.parse (undefined)", () => {
  const cases: [string, string][] = [
    ["bookmark", line({ type: "BOOKMARK", object: { metadata: { name: "x", resourceVersion: "5" } } })],
    ["error", line({ type: "ERROR", object: { kind: "Status", code: 410 } })],
    ["no name", line({ type: "ADDED", object: { metadata: { namespace: "n" } } })],
    ["escaped name", '{"type":"ADDED","object":{"metadata":{"name":"a\\u0062","namespace":"n"}}}'],
    ["truncated", line({ type: "ADDED", object: { metadata: { name: "x", namespace: "n" } } }).slice(0, 30)],
    ["not an object", "[1,2]"],
    ["not compact", ' {"type" : "ADDED","object":{"metadata":{"name":"x","namespace":"n"}}}'],
    [
      "metadata after spec",
      '{"type":"ADDED","object":{"spec":{"metadata":{"name":"decoy"}},"metadata":{"name":"x"}}}',
    ],
    ["name not a string", '{"type":"ADDED","object":{"metadata":{"name":{"a":1},"namespace":"n"}}}'],
    ["empty", ""],
    ["object before type (unknown type)", '{"object":{"metadata":{"name":"x"}}}'],
  ];
  for (const [what, text] of cases) assert.equal(peekWatchEvent(text), undefined, what);
});

test("peek: strings with escaped quotes and brackets inside skipped values do not derail the scan", () => {
  const event = {
    type: "ADDED",
    object: {
      metadata: {
        annotations: { a: 'say "}" and \\"{[', b: "\\\\" },
        labels: {},
        name: "r",
        namespace: "ns",
        resourceVersion: "12",
      },
    },
  };
  assert.deepEqual(peekWatchEvent(line(event)), { key: "ns/r", resourceVersion: "12" });
});

test("peek: agrees with JSON.parse on generated events", () => {
  for (let n = 0; n < 200; n++) {
    const labels: Record<string, string> = {};
    for (let k = 0; k < n % 5; k++) labels[`k${k}`] = `v"${k}\\}`;
    const event = {
      type: ["ADDED", "MODIFIED", "DELETED"][n % 3],
      object: {
        apiVersion: "v1",
        metadata: { labels, name: `req-${n}`, namespace: `ns-${n % 7}`, resourceVersion: String(n * 13) },
        spec: { nested: [[{ a: n }], "]", { b: null, c: true, d: -1.5e3 }] },
      },
    };
    const text = line(event);
    const parsed = JSON.parse(text) as typeof event;
    assert.deepEqual(peekWatchEvent(text), {
      key: `${parsed.object.metadata.namespace}/${parsed.object.metadata.name}`,
      resourceVersion: parsed.object.metadata.resourceVersion,
    });
  }
});
