// quarry-e2e: needs-node
//
// An init container that fails once and succeeds when the kubelet runs it
// again (restartPolicy OnFailure, KEP-17's only other choice than unset): the
// pipe resolver waits through the failure instead of failing the request,
// and stores what the second run wrote. The script counts its runs in the
// emptyDir (which outlives a container restart) and writes the count into the
// piped file, so the stored content names the run it came from.
import assert from "node:assert/strict";
import { test } from "node:test";
import { pipeStrategies, pipes } from "@quarry/api";
import { waitUntil } from "@quarry/devcluster/wait";
import { type ContainerStatus, pods } from "@quarry/harness/node";
import {
  configMapOutputs,
  done,
  isGone,
  pipeObject,
  pipeRequest,
  pipeStrategy,
  resultsOf,
  scriptPod,
  sha256,
  usePipeScenario,
  watchPipePods,
} from "@quarry/harness/pipe-scenario";
import { dataOf, resolvedOk, succeeded, waitForRequest } from "@quarry/harness/scenario";
import { configMaps, type KubeObject } from "@quarry/kube";

// run 1 writes its output too, then exits 1: a resolver that copied after it would store "run 1"
const SCRIPT = [
  "set -e",
  "n=$(cat /out/.runs 2>/dev/null || echo 0)",
  "n=$((n + 1))",
  "echo $n > /out/.runs",
  'echo "run $n" > /out/result',
  '[ "$n" -ge 2 ] || { echo "run $n fails on purpose" >&2; exit 1; }',
].join("\n");

type State = NonNullable<ContainerStatus["state"]>;

const pipe = usePipeScenario("pipe-init-retry", {
  node: true,
  setup: async (scn, node) => {
    await scn.admin.create(
      pipeStrategies,
      pipeStrategy(scn.namespace, "flaky", scriptPod(node!.toolsImage, SCRIPT), [], {
        outputs: configMapOutputs("/out/result"),
      }),
    );
    await scn.admin.create(
      pipes,
      pipeObject(scn.namespace, "flaky", { kind: "PipeStrategy", name: "flaky" }, [
        { file: "/out/result", kind: "ConfigMap", key: "result" },
      ]),
    );
  },
});

test("an init container that fails once, then succeeds: the second run's file is stored, the pod gone", {
  timeout: 180_000,
}, async () => {
  const { scn } = pipe();
  const ns = scn.namespace;
  const watch = watchPipePods(scn);
  await pipeRequest(scn, "flaky-1", { pipe: "flaky" });
  const rr = await waitForRequest(scn, "flaky-1", done, 150_000);
  assert.ok(resolvedOk(rr), `resolved, not failed on the first run's exit: ${JSON.stringify(succeeded(rr))}`);

  const [result, ...more] = resultsOf(rr);
  assert.ok(result && more.length === 0, dataOf(rr));
  assert.equal(result.name, "flaky-1-flaky-result");
  const cm = await scn.admin.get<KubeObject & { binaryData: Record<string, string> }>(
    configMaps,
    ns,
    result.name,
  );
  const bytes = Buffer.from(cm.binaryData.result ?? "", "base64");
  assert.equal(bytes.toString(), "run 2\n", "what the second run wrote");
  assert.equal(result.sha256, sha256(bytes));

  // the pod, as the kubelet reported it before the resolver deleted it
  const podName = await waitUntil("the pipe pod seen", () => watch.events[0]?.pod.metadata.name);
  await waitUntil("the pipe pod deleted", () => isGone(scn, pods, ns, podName), { timeoutMs: 30_000 });
  watch.stop();
  // the harness's Pod type leaves lastState out: it is read here only
  const statuses = watch.events.map(
    (e) => e.pod.status?.initContainerStatuses?.[0] as (ContainerStatus & { lastState?: State }) | undefined,
  );
  const restarts = Math.max(...statuses.map((s) => s?.restartCount ?? 0));
  assert.ok(restarts >= 1, `the init container ran again (restartCount ${restarts})`);
  assert.ok(
    statuses.some((s) => s?.lastState?.terminated?.exitCode === 1),
    "its first run was seen to exit 1",
  );
  assert.ok(
    statuses.some((s) => s?.state?.terminated?.exitCode === 0 && (s.restartCount ?? 0) >= 1),
    "a later run exited 0",
  );
  assert.deepEqual(new Set(watch.events.map((e) => e.pod.metadata.uid)).size, 1, "one pod, never a second");
});
