// Where a pipe pod is, read from its status: ready to copy (the init
// container finished with 0 and the waiting container runs), still on its
// way (with the time left to the pending-timeout), or failed for good (an
// image that cannot be pulled, a broken container config, a crash-looping
// init container, a failed pod, or the deadline passed), with a message
// naming the pod and its last state.
//
// Messages carry the kubelet's reasons and waiting messages, exit codes and
// the scheduler's condition message, never a terminated container's message:
// that is the container's termination log (or the tail of its output), which
// may hold what the init container wrote.
import { QuarryReason } from "@quarry/api";
import { formatDuration } from "@quarry/kube";
import { WAIT_CONTAINER_NAME } from "./validate.ts";

export interface ContainerState {
  waiting?: { reason?: string; message?: string };
  running?: { startedAt?: string };
  terminated?: { exitCode?: number; reason?: string; signal?: number; message?: string };
}

export interface ContainerStatus {
  name: string;
  state?: ContainerState;
  lastState?: ContainerState;
  restartCount?: number;
  ready?: boolean;
}

export interface PodCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface PodStatus {
  phase?: string;
  reason?: string;
  message?: string;
  conditions?: PodCondition[];
  initContainerStatuses?: ContainerStatus[];
  containerStatuses?: ContainerStatus[];
}

export interface PodLike {
  metadata: { name?: string; namespace?: string; creationTimestamp?: string; deletionTimestamp?: string };
  status?: PodStatus;
}

export type PodProgress =
  | { kind: "ready" }
  | { kind: "waiting"; message: string; wakeAfterMs: number }
  /** Being deleted (by us after a failure, or by someone): wait until it is gone. */
  | { kind: "deleting"; message: string }
  | { kind: "failed"; reason: QuarryReason; message: string };

/** Waiting reasons that do not clear up by themselves: the pod fails at once. */
export const FAILING_WAIT_REASONS: readonly string[] = [
  "ImagePullBackOff",
  "ErrImagePull",
  "ErrImageNeverPull",
  "InvalidImageName",
  "CrashLoopBackOff",
  "CreateContainerConfigError",
  "CreateContainerError",
];

const q = (s: string) => JSON.stringify(s);

function describeState(state: ContainerState | undefined): string {
  if (state?.terminated) {
    const t = state.terminated;
    const why = t.reason ? ` (${t.reason})` : "";
    const signal = t.signal ? `, signal ${t.signal}` : "";
    return `terminated with exit code ${t.exitCode ?? "?"}${signal}${why}`;
  }
  if (state?.waiting) {
    const w = state.waiting;
    return `waiting: ${w.reason ?? "unknown reason"}${w.message ? `: ${w.message}` : ""}`;
  }
  if (state?.running) return "running";
  return "not started";
}

function describeContainer(kind: string, s: ContainerStatus | undefined, name: string): string {
  if (!s) return `${kind} ${q(name)} not started`;
  const restarts = s.restartCount ? `, ${s.restartCount} restart${s.restartCount === 1 ? "" : "s"}` : "";
  const last = s.lastState?.terminated ? `; last ${describeState(s.lastState)}` : "";
  return `${kind} ${q(s.name)} ${describeState(s.state)}${restarts}${last}`;
}

/** The pod's last state in one line: phase, scheduling, both containers. */
export function describePod(pod: PodLike, initName: string): string {
  const st = pod.status ?? {};
  const parts = [`phase ${st.phase ?? "Pending"}`];
  if (st.reason) parts[0] += ` (${st.reason}${st.message ? `: ${st.message}` : ""})`;
  const scheduled = st.conditions?.find((c) => c.type === "PodScheduled");
  if (scheduled?.status === "False")
    parts.push(
      `not scheduled: ${scheduled.reason ?? ""}${scheduled.message ? ` ${scheduled.message}` : ""}`.trim(),
    );
  parts.push(describeContainer("init container", initStatus(st, initName), initName));
  parts.push(
    describeContainer(
      "container",
      st.containerStatuses?.find((c) => c.name === WAIT_CONTAINER_NAME),
      WAIT_CONTAINER_NAME,
    ),
  );
  return parts.join("; ");
}

function initStatus(st: PodStatus, initName: string): ContainerStatus | undefined {
  return st.initContainerStatuses?.find((c) => c.name === initName) ?? st.initContainerStatuses?.[0];
}

/**
 * When the deadline starts: the pod's creationTimestamp, or the end of its second when the stamp
 * has whole-second resolution (as the apiserver writes it), so a pod never fails early.
 */
function startOf(stamp: string | undefined, now: number): number {
  const t = Date.parse(stamp ?? "");
  if (!Number.isFinite(t)) return now;
  return /\.\d+/.test(stamp ?? "") ? t : t + 1000;
}

/**
 * The pod's progress at `now`. `pendingTimeoutMs` counts from the pod's creation until the files
 * can be copied (init container done, waiting container running).
 */
export function podProgress(
  pod: PodLike,
  initName: string,
  now: number,
  pendingTimeoutMs: number,
): PodProgress {
  const name = `${pod.metadata.namespace ?? ""}/${pod.metadata.name ?? ""}`;
  const st = pod.status ?? {};
  const failed = (reason: QuarryReason, why: string): PodProgress => ({
    kind: "failed",
    reason,
    message: `pipe pod ${q(name)} ${why}; ${describePod(pod, initName)}`,
  });
  if (pod.metadata.deletionTimestamp)
    return { kind: "deleting", message: `pipe pod ${q(name)} is being deleted` };
  if (st.phase === "Failed") return failed(QuarryReason.PodFailed, "failed");
  if (st.phase === "Succeeded")
    return failed(
      QuarryReason.PodFailed,
      "ended before its files were copied (the waiting container exited)",
    );

  const init = initStatus(st, initName);
  const wait = st.containerStatuses?.find((c) => c.name === WAIT_CONTAINER_NAME);
  for (const [what, s] of [
    ["init container", init],
    ["container", wait],
  ] as const) {
    const reason = s?.state?.waiting?.reason;
    if (reason && FAILING_WAIT_REASONS.includes(reason))
      return failed(QuarryReason.PodFailed, `cannot run: ${what} ${q(s.name)} is in ${reason}`);
  }
  const initDone = init?.state?.terminated?.exitCode === 0;
  if (initDone && wait?.state?.terminated)
    return failed(
      QuarryReason.PodFailed,
      `cannot be copied from: container ${q(WAIT_CONTAINER_NAME)} exited`,
    );
  if (initDone && wait?.state?.running) return { kind: "ready" };

  const age = now - startOf(pod.metadata.creationTimestamp, now);
  if (age >= pendingTimeoutMs)
    return failed(
      QuarryReason.PodPendingTimeout,
      `did not get its files ready within the pending-timeout of ${formatDuration(pendingTimeoutMs)}`,
    );
  return {
    kind: "waiting",
    message: `waiting for pipe pod ${q(name)}: ${describePod(pod, initName)}`,
    wakeAfterMs: Math.max(1, pendingTimeoutMs - age),
  };
}
