// `helm test` of the umbrella chart (charts/quarry/templates/tests/resolve.yaml): one request
// resolved end to end by the installed fleet. In its namespace it creates a Task, then a
// ResolutionRequest of type cluster for that Task; the cluster resolver must return the Task and
// the lifecycle controller complete the request within the timeout. Both objects are deleted
// afterwards. It ships in the lifecycle controller's image (every install runs that service) and
// the test pod runs it as `node src/helm-test.js`.
//   QUARRY_HELM_TEST_NAMESPACE  where (the release namespace; the chart sets it from the pod's)
//   QUARRY_HELM_TEST_TIMEOUT    how long to wait for the request (Go duration, default 2m)
import { randomBytes } from "node:crypto";
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  CONDITION_SUCCEEDED,
  getCondition,
  isDone,
  LABEL_RESOLVER_TYPE,
  RESOLUTION_V1BETA1,
  type ResolutionRequest,
  resolutionRequests,
} from "@quarry/api";
import { isApiError, type KubeClient, type KubeObject, parseDuration, RestKubeClient } from "@quarry/kube";

export const tasks = {
  group: "tekton.dev",
  version: "v1",
  plural: "tasks",
  kind: "Task",
  namespaced: true,
} as const;

/** The Task the test resolves: never run, only read back by the cluster resolver. */
export function testTask(namespace: string, name: string): KubeObject & { spec: unknown } {
  return {
    apiVersion: "tekton.dev/v1",
    kind: "Task",
    metadata: {
      name,
      namespace,
      labels: { "app.kubernetes.io/part-of": "quarry", "quarry.dev/helm-test": "" },
    },
    spec: { steps: [{ name: "hello", image: "busybox", script: "echo resolved by quarry" }] },
  };
}

export function testRequest(namespace: string, name: string): ResolutionRequest {
  return {
    apiVersion: RESOLUTION_V1BETA1,
    kind: "ResolutionRequest",
    metadata: {
      name,
      namespace,
      labels: { [LABEL_RESOLVER_TYPE]: "cluster", "quarry.dev/helm-test": "" },
    },
    spec: {
      params: [
        { name: "kind", value: "task" },
        { name: "name", value: name },
        { name: "namespace", value: namespace },
      ],
    },
  };
}

export type Verdict = { ok: true; message: string } | { ok: false; message: string };

/** Did the fleet resolve `rr` to the Task named `task`? undefined: not done yet. */
export function verdict(rr: ResolutionRequest, task: string): Verdict | undefined {
  if (!isDone(rr.status)) return undefined;
  const cond = getCondition(rr.status, CONDITION_SUCCEEDED);
  if (cond?.status !== "True")
    return { ok: false, message: `request failed: ${cond?.reason ?? "?"}: ${cond?.message ?? ""}` };
  const data = Buffer.from(rr.status?.data ?? "", "base64").toString("utf8");
  // the cluster resolver returns the object as stored (YAML), so its kind and name are in it
  if (!/\bkind"?:\s*"?Task\b/.test(data) || !data.includes(task))
    return {
      ok: false,
      message: `request succeeded but its data is not Task ${task}: ${data.slice(0, 200)}`,
    };
  return { ok: true, message: `resolved Task ${task} through the cluster resolver` };
}

async function run(client: KubeClient, namespace: string, timeoutMs: number): Promise<Verdict> {
  const name = `quarry-helm-test-${randomBytes(3).toString("hex")}`;
  try {
    try {
      await client.create(tasks, testTask(namespace, name));
    } catch (err) {
      if (isApiError(err, 404))
        return {
          ok: false,
          message: "Tekton's Task CRD (tasks.tekton.dev/v1) is not served: install Tekton Pipelines",
        };
      throw err;
    }
    await client.create(resolutionRequests, testRequest(namespace, name));
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const rr = await client.get<ResolutionRequest>(resolutionRequests, namespace, name);
      const v = verdict(rr, name);
      if (v) return v;
      if (Date.now() > deadline) {
        const cond = getCondition(rr.status, CONDITION_SUCCEEDED);
        const state = cond
          ? `${cond.reason ?? cond.status}: ${cond.message ?? ""}`
          : "not initialised by the lifecycle controller";
        return {
          ok: false,
          message: `request ${namespace}/${name} not done after ${timeoutMs / 1000}s (${state})`,
        };
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  } finally {
    for (const rt of [resolutionRequests, tasks]) await client.delete(rt, namespace, name).catch(() => {});
  }
}

async function main(): Promise<number> {
  const namespace = process.env.QUARRY_HELM_TEST_NAMESPACE;
  if (!namespace) {
    console.error("QUARRY_HELM_TEST_NAMESPACE is not set");
    return 2;
  }
  const timeoutMs = parseDuration(process.env.QUARRY_HELM_TEST_TIMEOUT || "2m");
  const v = await run(RestKubeClient.fromEnvironment(), namespace, timeoutMs);
  console.log(JSON.stringify({ test: "resolve", ok: v.ok, message: v.message }));
  return v.ok ? 0 : 1;
}

// Run as a script, not when imported by its tests.
if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main().catch((err: unknown) => {
    console.log(JSON.stringify({ test: "resolve", ok: false, message: String(err) }));
    return 1;
  });
}
