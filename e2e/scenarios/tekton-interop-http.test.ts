// Tekton Pipelines' own controller (v1.15.1) with `taskRef.resolver: http`, answered by Quarry's
// http resolver from a server on loopback. Tekton's resolvers Deployment is at zero replicas, as
// an operator leaves it for Quarry: the harness never starts Tekton's `resolvers` process, and
// each case asserts from the apiserver's audit log that only Quarry's processes wrote the
// requests' status and that no user of Tekton's resolvers namespace called the API.
//
// What Tekton's http resolver would have answered is computed as it computes it
// (pkg/resolution/resolver/http): the body as data, refSource {uri: the url, digest: {sha256: hex
// of the body}}, with or without a `digest` param; a `digest` the body does not match fails the
// request, which Tekton's controller turns into TaskRunResolutionFailed.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, test } from "node:test";
import { type HttpFixture, startHttpFixture } from "@quarry/harness/http-server";
import { succeeded } from "@quarry/harness/scenario";
import {
  createRun,
  expectResolutionFailure,
  expectResolvedAsTekton,
  params,
  type TektonCluster,
  taskRuns,
  useTektonCluster,
} from "@quarry/harness/tekton";

const TASK = `apiVersion: tekton.dev/v1
kind: Task
metadata:
  name: fetched
spec:
  params:
    - name: target
      type: string
      default: all
  steps:
    - name: build
      image: busybox
      script: echo build from http
`;
const PATH = "/tasks/fetched.yaml";
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

let web: HttpFixture | undefined;
const cluster = useTektonCluster("tekton-http", {
  gitFiles: { "README.md": "unused\n" },
  auditLog: true,
  setup: async () => {
    web = await startHttpFixture();
    web.route(PATH, (_q, res) => res.end(TASK));
  },
  services: { "lifecycle-controller": {}, "http-resolver": {} },
});
after(() => web?.close());

const url = () => `${web?.base}${PATH}`;

/** Tekton's http resolver's answer for the url (the digest param does not change it). */
const tektonAnswer = () => ({
  type: "http",
  service: "http-resolver",
  data: TASK,
  refSource: { uri: url(), digest: { sha256: sha256(TASK) } },
});

const RESOLVED: { name: string; params: () => Record<string, string> }[] = [
  { name: "http-plain", params: () => ({ url: url() }) },
  { name: "http-digest", params: () => ({ url: url(), digest: `sha256:${sha256(TASK)}` }) },
];

test("TaskRuns with taskRef.resolver http, with and without digest, carry what Tekton's resolver would", async () => {
  const t: TektonCluster = cluster();
  await Promise.all(
    RESOLVED.map((c) =>
      createRun(t, taskRuns, c.name, { taskRef: { resolver: "http", params: params(c.params()) } }),
    ),
  );
  for (const c of RESOLVED) await expectResolvedAsTekton(t, taskRuns, c.name, tektonAnswer());
});

test("a digest the content does not match ends the TaskRun TaskRunResolutionFailed", async () => {
  const t = cluster();
  const other = sha256("other content\n");
  await createRun(t, taskRuns, "http-mismatch", {
    taskRef: { resolver: "http", params: params({ url: url(), digest: `sha256:${other}` }) },
  });
  const { request } = await expectResolutionFailure(t, taskRuns, "http-mismatch", {
    service: "http-resolver",
    runReason: "TaskRunResolutionFailed",
  });
  assert.equal(request.status?.annotations?.["quarry.dev/reason"], "DigestMismatch");
  assert.match(succeeded(request)?.message ?? "", new RegExp(other));
});
