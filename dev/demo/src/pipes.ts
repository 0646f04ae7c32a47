// The demo's Pipe run (KEP-17): a CustomRun whose customRef is the Pipe
// `self-signed`. The run-controller creates its pipe ResolutionRequest; the
// pipe resolver runs the strategy's pod on the demo's real node (openssl in the
// init container), copies tls.crt and tls.key out through the exec
// subresource, stores each as a Secret owned by the run and deletes the pod;
// the run ends with results naming the Secrets. The demo prints the Secrets'
// names, types, keys and sizes, and checks the pair in its own process; never
// their content.
import { type AnyRun, PIPE_KIND, QUARRY_V1ALPHA1, RESOLUTION_REQUEST_KIND } from "@quarry/api";
import { applyObject } from "@quarry/devcluster/apply";
import { createRun, runDone, runObject } from "@quarry/devcluster/runs";
import { secrets } from "@quarry/kube";
import type { DemoCluster } from "./cluster.ts";
import type { Narrator } from "./narrator.ts";
import { CERT_FILES, CERT_PIPE, PIPE_PENDING_TIMEOUT } from "./pipe-objects.ts";
import { watchPipePods } from "./pod-watch.ts";
import { expect, until } from "./runs.ts";
import { certificateFacts, type SecretObject, secretBytes, secretSummary } from "./secrets.ts";
import { runOutcome } from "./summary.ts";

export const PIPE_RUN = "make-cert";
/** The run's param: it overrides the Pipe's own common name. */
export const PIPE_RUN_CN = "api.demo.quarry.test";
/**
 * The lifecycle controller's global timeout during and after the Pipe run: the
 * 5s that (10) shows would fail a pipe request whose pod takes a few seconds.
 * Above the pipe resolver's pending-timeout, as its README asks.
 */
export const PIPE_LIFECYCLE_TIMEOUT = "2m";
/** A pod on a busy 2-core machine: start, openssl, copy, store, well within this. */
const PIPE_RUN_TIMEOUT_MS = 90_000;

export interface PipeStory {
  run: AnyRun;
  /** The Secrets the run's results name, as the apiserver returned them (data included: never print it). */
  secrets: SecretObject[];
}

export async function runPipeStory(c: DemoCluster, n: Narrator, signal: AbortSignal): Promise<PipeStory> {
  const ns = c.namespace;
  n.say(
    `(16) a Pipe run: CustomRun ${PIPE_RUN}, customRef ${QUARRY_V1ALPHA1} ${PIPE_KIND} ${CERT_PIPE}, cn=${PIPE_RUN_CN}: openssl makes a self-signed certificate in a pod on the real node, the pipe resolver stores it as Secrets`,
  );
  // live: the lifecycle controller re-reads its ConfigMap; (10)'s request already timed out
  await applyObject(c.admin, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "lifecycle-controller-config", namespace: ns },
    data: { "default-maximum-resolution-timeout": PIPE_LIFECYCLE_TIMEOUT },
  });
  n.say(
    `  ${ns}/lifecycle-controller-config: default-maximum-resolution-timeout: ${PIPE_LIFECYCLE_TIMEOUT}, live (a pipe pod takes seconds; the pipe resolver's own pending-timeout is ${PIPE_PENDING_TIMEOUT})`,
  );
  const pending = c.node.pending();
  // usually ready long before: it started in the background with the control plane
  if (pending !== undefined)
    await n.step(
      `waiting for the node (its start says: ${pending})`,
      () => c.node.ready,
      () => "ready",
      "the real node (its start in the background)",
    );
  await c.node.ready;
  signal.throwIfAborted();

  const pods = watchPipePods(c.admin, ns, (m) => n.say(m), signal);
  try {
    const run = await n.record(
      "(16)",
      `a Pipe run: ${CERT_PIPE}, a certificate into Secrets`,
      async () => {
        await createRun(
          c.admin,
          runObject("CustomRun", ns, {
            name: PIPE_RUN,
            ref: { apiVersion: QUARRY_V1ALPHA1, kind: PIPE_KIND, name: CERT_PIPE },
            params: [{ name: "cn", value: PIPE_RUN_CN }],
          }),
        );
        return expect(await until(c, n, PIPE_RUN, "done", runDone, PIPE_RUN_TIMEOUT_MS), "True", "Succeeded");
      },
      runOutcome,
    );
    const child = run.status?.childReferences?.find((r) => r.kind === RESOLUTION_REQUEST_KIND);
    n.say(`  the run-controller asked the pipe resolver through ResolutionRequest ${child?.name ?? "?"}`);
    const results = run.status?.results ?? [];
    n.say(`  results: ${results.map((r) => `${r.name}=${r.value}`).join(", ") || "<none>"}`);
    const stored: SecretObject[] = [];
    for (const entry of CERT_FILES) {
      const result = results.find((r) => r.name === entry.key);
      if (!result) throw new Error(`${PIPE_RUN} has no result ${entry.key}`);
      const secret = await c.admin.get<SecretObject>(secrets, ns, result.value);
      n.say(`  ${secretSummary(secret)}`);
      stored.push(secret);
    }
    const [crt, key] = CERT_FILES.map((f, i) => secretBytes(stored[i]!, baseName(f.file)));
    n.say(`  checked in the demo's process, neither printed: ${certificateFacts(crt!, key!)}`);
    n.say(
      (await pods.allGone(POD_GONE_TIMEOUT_MS))
        ? "  the pipe pod is gone: the resolver deleted it once the files were stored"
        : `  the pipe pod is still there ${POD_GONE_TIMEOUT_MS / 1000}s after the run ended`,
    );
    return { run, secrets: stored };
  } finally {
    pods.stop();
  }
}

const baseName = (path: string) => path.slice(path.lastIndexOf("/") + 1);

/** The pod is deleted before the request is answered; the kubelet confirms within a few seconds. */
const POD_GONE_TIMEOUT_MS = 10_000;
