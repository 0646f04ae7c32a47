import assert from "node:assert/strict";
import { test } from "node:test";
import type { AnyRun, CustomRun, Run } from "@quarry/api";
import { ApiError, type KubeClient } from "@quarry/kube";
import { formatRuns, runGetRuns } from "./get-runs.ts";

const now = Date.parse("2025-06-01T12:00:00Z");
const ago = (seconds: number) => new Date(now - seconds * 1000).toISOString();

const customRun: CustomRun = {
  apiVersion: "tekton.dev/v1beta1",
  kind: "CustomRun",
  metadata: { name: "wait-1", namespace: "ci", creationTimestamp: ago(200) },
  spec: { customRef: { apiVersion: "example.dev/v1", kind: "Wait" } },
  status: {
    conditions: [{ type: "Succeeded", status: "False", reason: "ResolutionFailed" }],
    startTime: ago(190),
    completionTime: ago(5),
  },
};
const run: Run = {
  apiVersion: "tekton.dev/v1alpha1",
  kind: "Run",
  metadata: { name: "approve", namespace: "ci", creationTimestamp: ago(3) },
  spec: { spec: { apiVersion: "example.dev/v1", kind: "Approval" } },
};
const other: CustomRun = {
  ...customRun,
  metadata: { name: "wait-1", namespace: "b", creationTimestamp: ago(30) },
  status: { conditions: [{ type: "Succeeded", status: "Unknown", reason: "Running" }], startTime: ago(29) },
};

test("one namespace: both flavours in one table, sorted by name; unset times are blank", () => {
  assert.equal(
    formatRuns([customRun, run], now, false),
    [
      "NAME      TYPE        KIND       SUCCEEDED   REASON             STARTTIME   COMPLETIONTIME   AGE",
      "approve   Run         Approval                                                               3s",
      "wait-1    CustomRun   Wait       False       ResolutionFailed   3m10s       5s               3m20s",
      "",
    ].join("\n"),
  );
});

test("all namespaces: NAMESPACE first, sorted by namespace, name, then flavour", () => {
  const sameName: Run = { ...run, metadata: { ...run.metadata, name: "wait-1" } };
  const lines = formatRuns([customRun, sameName, other], now, true).split("\n");
  assert.match(
    lines[0]!,
    /^NAMESPACE\s+NAME\s+TYPE\s+KIND\s+SUCCEEDED\s+REASON\s+STARTTIME\s+COMPLETIONTIME\s+AGE$/,
  );
  assert.deepEqual(
    lines.slice(1, 4).map((l) => l.split(/\s+/).slice(0, 3)),
    [
      ["b", "wait-1", "CustomRun"],
      ["ci", "wait-1", "CustomRun"],
      ["ci", "wait-1", "Run"],
    ],
  );
  assert.match(lines[1]!, /Unknown\s+Running\s+29s\s+30s$/);
});

/** A client whose list answers from a table by plural, or throws what the table holds. */
function fakeClient(answers: Record<string, AnyRun[] | Error>): { client: KubeClient; listed: string[] } {
  const listed: string[] = [];
  const client = {
    list: async (rt: { plural: string }, namespace: string | undefined) => {
      listed.push(`${rt.plural}@${namespace ?? "*"}`);
      const a = answers[rt.plural];
      if (a instanceof Error) throw a;
      // a real list may carry items without apiVersion and kind
      return { items: (a ?? []).map((i) => ({ metadata: i.metadata, spec: i.spec, status: i.status })) };
    },
  } as unknown as KubeClient;
  return { client, listed };
}

const unserved = () =>
  new ApiError(404, undefined, "GET /apis/tekton.dev/v1alpha1/runs: HTTP 404: 404 page not found");

async function capture(client: KubeClient, namespace: string | undefined, flavours: AnyRun["kind"][]) {
  let out = "";
  let err = "";
  await runGetRuns(
    client,
    { namespace, flavours },
    (s) => (out += s),
    (s) => (err += s),
  );
  return { out, err };
}

test("a flavour whose CRD is not served is skipped; the list says each item's flavour", async () => {
  const { client, listed } = fakeClient({ runs: unserved(), customruns: [customRun] });
  const { out, err } = await capture(client, "ci", ["Run", "CustomRun"]);
  assert.deepEqual(listed.sort(), ["customruns@ci", "runs@ci"]);
  assert.equal(err, "");
  assert.match(out, /^wait-1 +CustomRun +Wait +False/m);
});

test("nothing found, nothing served, other errors", async () => {
  assert.deepEqual(
    await capture(fakeClient({ runs: [], customruns: [] }).client, "ci", ["Run", "CustomRun"]),
    {
      out: "",
      err: "No resources found in ci namespace.\n",
    },
  );
  assert.equal((await capture(fakeClient({}).client, undefined, ["CustomRun"])).err, "No resources found\n");
  await assert.rejects(
    capture(fakeClient({ runs: unserved(), customruns: unserved() }).client, "ci", ["Run", "CustomRun"]),
    /does not serve runs\.tekton\.dev or customruns\.tekton\.dev: is Tekton Pipelines installed\?/,
  );
  const forbidden = new ApiError(403, "Forbidden", "customruns is forbidden");
  await assert.rejects(
    capture(fakeClient({ customruns: forbidden }).client, "ci", ["Run", "CustomRun"]),
    forbidden,
  );
});

test("only the flavours asked for are listed", async () => {
  const { client, listed } = fakeClient({ runs: [run], customruns: [customRun] });
  const { out } = await capture(client, undefined, ["CustomRun"]);
  assert.deepEqual(listed, ["customruns@*"]);
  assert.doesNotMatch(out, /approve/);
});
