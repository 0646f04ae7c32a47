import assert from "node:assert/strict";
import { test } from "node:test";
import { type ContainerStatus, type PodLike, type PodProgress, podProgress } from "./pod-state.ts";

const T0 = Date.parse("2025-01-01T00:00:00Z");
const TIMEOUT = 120_000;

function pod(status: PodLike["status"], extra: Partial<PodLike["metadata"]> = {}): PodLike {
  return {
    metadata: {
      name: "r-pipe-abc",
      namespace: "ns",
      creationTimestamp: new Date(T0).toISOString(),
      ...extra,
    },
    status,
  };
}
const init = (state: ContainerStatus["state"], more: Partial<ContainerStatus> = {}): ContainerStatus => ({
  name: "gen",
  state,
  ...more,
});
const wait = (state: ContainerStatus["state"]): ContainerStatus => ({ name: "quarry-wait", state });
const done = init({ terminated: { exitCode: 0, reason: "Completed" } });

test("podProgress: table", () => {
  const cases: {
    name: string;
    pod: PodLike;
    at?: number;
    want: Partial<PodProgress> & { kind: string };
    message?: RegExp;
  }[] = [
    { name: "just created: no status", pod: pod(undefined), want: { kind: "waiting", wakeAfterMs: TIMEOUT } },
    {
      name: "unschedulable, in time",
      pod: pod({
        phase: "Pending",
        conditions: [
          {
            type: "PodScheduled",
            status: "False",
            reason: "Unschedulable",
            message: "0/1 nodes are available",
          },
        ],
      }),
      at: T0 + 20_000,
      want: { kind: "waiting", wakeAfterMs: 100_000 },
      message: /not scheduled: Unschedulable 0\/1 nodes are available/,
    },
    {
      name: "unschedulable past the deadline",
      pod: pod({
        phase: "Pending",
        conditions: [
          {
            type: "PodScheduled",
            status: "False",
            reason: "Unschedulable",
            message: "0/1 nodes are available",
          },
        ],
      }),
      at: T0 + TIMEOUT,
      want: { kind: "failed", reason: "PodPendingTimeout" },
      message:
        /^pipe pod "ns\/r-pipe-abc" did not get its files ready within the pending-timeout of 2m0s; phase Pending; not scheduled: Unschedulable 0\/1 nodes are available; init container "gen" not started/,
    },
    {
      name: "init running, in time",
      pod: pod({
        phase: "Pending",
        initContainerStatuses: [init({ running: {} })],
        containerStatuses: [wait({ waiting: { reason: "PodInitializing" } })],
      }),
      at: T0 + 119_999,
      want: { kind: "waiting", wakeAfterMs: 1 },
    },
    {
      name: "init still running at the deadline",
      pod: pod({ phase: "Pending", initContainerStatuses: [init({ running: {} })] }),
      at: T0 + 121_000,
      want: { kind: "failed", reason: "PodPendingTimeout" },
      message: /init container "gen" running; container "quarry-wait" not started/,
    },
    {
      name: "image pull back-off fails at once, naming the pod and the kubelet's message",
      pod: pod({
        phase: "Pending",
        initContainerStatuses: [
          init({ waiting: { reason: "ImagePullBackOff", message: 'Back-off pulling image "nope:1"' } }),
        ],
      }),
      want: { kind: "failed", reason: "PodFailed" },
      message:
        /^pipe pod "ns\/r-pipe-abc" cannot run: init container "gen" is in ImagePullBackOff; phase Pending; init container "gen" waiting: ImagePullBackOff: Back-off pulling image "nope:1"/,
    },
    {
      name: "the waiting container's image cannot be pulled",
      pod: pod({
        phase: "Pending",
        initContainerStatuses: [done],
        containerStatuses: [wait({ waiting: { reason: "ErrImageNeverPull" } })],
      }),
      want: { kind: "failed", reason: "PodFailed" },
      message: /container "quarry-wait" is in ErrImageNeverPull/,
    },
    {
      name: "crash loop: exit code and restarts, never the termination message",
      pod: pod({
        phase: "Pending",
        initContainerStatuses: [
          init(
            {
              waiting: {
                reason: "CrashLoopBackOff",
                message: "back-off 10s restarting failed container=gen",
              },
            },
            {
              restartCount: 3,
              lastState: { terminated: { exitCode: 1, reason: "Error", message: "SECRET-IN-LOG" } },
            },
          ),
        ],
      }),
      want: { kind: "failed", reason: "PodFailed" },
      message:
        /init container "gen" waiting: CrashLoopBackOff: back-off 10s restarting failed container=gen, 3 restarts; last terminated with exit code 1 \(Error\)/,
    },
    {
      name: "config error",
      pod: pod({
        phase: "Pending",
        initContainerStatuses: [
          init({ waiting: { reason: "CreateContainerConfigError", message: 'secret "s" not found' } }),
        ],
      }),
      want: { kind: "failed", reason: "PodFailed" },
      message: /CreateContainerConfigError: secret "s" not found/,
    },
    {
      name: "a failed pod",
      pod: pod({
        phase: "Failed",
        reason: "Evicted",
        message: "The node was low on resource: ephemeral-storage.",
      }),
      want: { kind: "failed", reason: "PodFailed" },
      message:
        /^pipe pod "ns\/r-pipe-abc" failed; phase Failed \(Evicted: The node was low on resource: ephemeral-storage\.\)/,
    },
    {
      name: "the waiting container exited",
      pod: pod({
        phase: "Running",
        initContainerStatuses: [done],
        containerStatuses: [wait({ terminated: { exitCode: 137 } })],
      }),
      want: { kind: "failed", reason: "PodFailed" },
      message: /container "quarry-wait" exited/,
    },
    {
      name: "a pod that ended",
      pod: pod({ phase: "Succeeded" }),
      want: { kind: "failed", reason: "PodFailed" },
      message: /ended before its files were copied/,
    },
    {
      name: "init done, waiting container starting",
      pod: pod({
        phase: "Pending",
        initContainerStatuses: [done],
        containerStatuses: [wait({ waiting: { reason: "ContainerCreating" } })],
      }),
      at: T0 + 1000,
      want: { kind: "waiting", wakeAfterMs: 119_000 },
    },
    {
      name: "ready: init done with 0, waiting container running (even past the deadline)",
      pod: pod({
        phase: "Running",
        initContainerStatuses: [done],
        containerStatuses: [wait({ running: {} })],
      }),
      at: T0 + 10 * TIMEOUT,
      want: { kind: "ready" },
    },
    {
      name: "a whole-second creationTimestamp counts from the end of its second: never early",
      pod: pod({ phase: "Pending" }, { creationTimestamp: "2025-01-01T00:00:00Z" }),
      at: T0 + TIMEOUT,
      want: { kind: "waiting", wakeAfterMs: 1000 },
    },
    {
      name: "... and fails once that has passed",
      pod: pod({ phase: "Pending" }, { creationTimestamp: "2025-01-01T00:00:00Z" }),
      at: T0 + TIMEOUT + 1000,
      want: { kind: "failed", reason: "PodPendingTimeout" },
    },
    {
      name: "being deleted",
      pod: pod({ phase: "Running" }, { deletionTimestamp: new Date(T0).toISOString() }),
      want: { kind: "deleting" },
    },
  ];
  for (const c of cases) {
    const got = podProgress(c.pod, "gen", c.at ?? T0, TIMEOUT);
    for (const [k, v] of Object.entries(c.want))
      assert.equal((got as Record<string, unknown>)[k], v, `${c.name}: ${k} (${JSON.stringify(got)})`);
    if (c.message) assert.match((got as { message: string }).message, c.message, c.name);
    assert.doesNotMatch(JSON.stringify(got), /SECRET-IN-LOG/, c.name);
  }
});
