import assert from "node:assert/strict";
import { test } from "node:test";
import type { ResolutionRequest } from "@quarry/api";
import { type CoreEvent, describeRequest } from "./describe.ts";

const now = Date.parse("2025-06-01T12:00:10Z");
const taskYaml = Array.from({ length: 12 }, (_, i) => `line${i + 1}: x`).join("\n");

const succeeded: ResolutionRequest = {
  apiVersion: "resolution.tekton.dev/v1beta1",
  kind: "ResolutionRequest",
  metadata: {
    name: "git-task",
    namespace: "demo",
    labels: { "resolution.tekton.dev/type": "git", app: "x" },
    creationTimestamp: "2025-06-01T12:00:00Z",
  },
  spec: {
    params: [
      { name: "url", value: "https://example.com/catalog.git" },
      { name: "paths", value: ["a", "b"] },
    ],
  },
  status: {
    conditions: [{ type: "Succeeded", status: "True", lastTransitionTime: "2025-06-01T12:00:05Z" }],
    annotations: { "resolution.tekton.dev/content-type": "application/x-yaml" },
    data: Buffer.from(`${taskYaml}\n`).toString("base64"),
    refSource: {
      uri: "git+https://example.com/catalog.git",
      digest: { sha1: "abc123" },
      entryPoint: "task.yaml",
    },
  },
};

test("a succeeded request: params, data preview, refSource, no events", () => {
  const out = describeRequest(succeeded, [], now);
  const expected = [
    "Name:                git-task",
    "Namespace:           demo",
    "Labels:              app=x",
    "                     resolution.tekton.dev/type=git",
    "Annotations:         <none>",
    "Created:             2025-06-01T12:00:00Z (10s ago)",
    "Resolver:            git",
    "Params:",
    "  url:    https://example.com/catalog.git",
    '  paths:  ["a","b"]',
    "Conditions:",
    "  Type        Status   Reason   Last Transition                 Message",
    "  ----        ------   ------   ---------------                 -------",
    "  Succeeded   True              2025-06-01T12:00:05Z (5s ago)",
    "Status Annotations:  resolution.tekton.dev/content-type=application/x-yaml",
    "Data:                111 bytes (application/x-yaml)",
    "  line1: x",
  ];
  assert.deepEqual(out.split("\n").slice(0, expected.length), expected);
  assert.match(out, /\n {2}line10: x\n {2}\.\.\. \(2 more lines\)\n/);
  assert.match(
    out,
    /RefSource:\n {2}URI: {10}git\+https:\/\/example\.com\/catalog\.git\n {2}Digest: {7}sha1:abc123\n {2}Entry Point: {2}task\.yaml\n/,
  );
  assert.match(out, /\nEvents: +<none>\n$/);
});

test("a failed request: alias resolver, no params or data, events oldest first with repeat counts", () => {
  const failed: ResolutionRequest = {
    ...succeeded,
    metadata: {
      ...succeeded.metadata,
      name: "alias",
      labels: { "resolution.tekton.dev/resolver": "in-cluster" },
    },
    spec: {},
    status: {
      conditions: [
        {
          type: "Succeeded",
          status: "False",
          reason: "ResolutionTimedOut",
          message: "no resolver for type cluster answered within 5s",
          lastTransitionTime: "2025-06-01T12:00:05Z",
        },
      ],
    },
  };
  const ev = (reason: string, last: string, count = 1): CoreEvent => ({
    metadata: { name: `alias.${reason}` },
    type: "Warning",
    reason,
    message: `${reason} happened`,
    count,
    firstTimestamp: "2025-06-01T12:00:01Z",
    lastTimestamp: last,
    source: { component: "lifecycle-controller" },
  });
  const out = describeRequest(
    failed,
    [ev("Later", "2025-06-01T12:00:08Z", 3), ev("Earlier", "2025-06-01T12:00:01Z")],
    now,
  );
  assert.match(out, /^Resolver: +cluster \(from resolution\.tekton\.dev\/resolver=in-cluster\)$/m);
  assert.match(out, /^Params: +<none>$/m);
  assert.match(
    out,
    /^ {2}Succeeded +False +ResolutionTimedOut +2025-06-01T12:00:05Z \(5s ago\) +no resolver for type cluster answered within 5s$/m,
  );
  assert.match(out, /^Data: +<none>$/m);
  assert.match(out, /^RefSource: +<none>$/m);
  const events = out.slice(out.indexOf("Events:")).split("\n");
  assert.match(events[1]!, /^ {2}Type +Reason +Age +From +Message$/);
  assert.match(events[3]!, /^ {2}Warning +Earlier +9s +lifecycle-controller +Earlier happened$/);
  assert.match(events[4]!, /^ {2}Warning +Later +2s \(x3 over 9s\) +lifecycle-controller +Later happened$/);
});

test("binary data is sized but not printed", () => {
  const bin: ResolutionRequest = {
    ...succeeded,
    status: { data: Buffer.from([0xff, 0xfe, 0x00, 0x01]).toString("base64") },
  };
  assert.match(describeRequest(bin, [], now), /^Data: +4 bytes, binary$/m);
});
