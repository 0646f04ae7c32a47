// What a scenario that runs pods gets from the runner's test node
// (dev/devcluster/src/node.ts): the node's name and image names, the moment it
// is ready, pod defaults every pod on it needs, and exec (the apiserver's exec
// subresource through the kubelet, as kubectl exec does).
//
// The runner starts the node only for scenario files named node-*.test.ts or
// carrying the line `// quarry-e2e: needs-node` (e.g. a pipe-*.test.ts that runs
// pipe pods), and runs them after the others while the node starts in the
// background.
import { readFileSync } from "node:fs";
import { Writable } from "node:stream";
import { Exec, KubeConfig, type V1Status } from "@kubernetes/client-node";
import { type Container, type Pod, pods } from "@quarry/devcluster/pods";
import { waitUntil } from "@quarry/devcluster/wait";
import type { KubeClient, KubeObject } from "@quarry/kube";
import type { SharedControlPlane } from "./env.ts";

export { type Container, type ContainerStatus, nodes, type Pod, pods } from "@quarry/devcluster/pods";

export interface SharedNode {
  /** The Node's name (127.0.0.1). */
  name: string;
  /** busybox (applets on PATH) and openssl; see dev/devcluster/src/node-images.ts. */
  toolsImage: string;
  pauseImage: string;
  /** The node's directory: containerd, kubelet, kube-controller-manager and kube-scheduler logs. */
  dir: string;
  /** The host's address on the pod network (198.18.0.1): servers pods reach listen here. */
  hostAddress: string;
}

interface NodeState extends Partial<SharedNode> {
  ready?: boolean;
  error?: string;
}

/**
 * Waits until the runner's node is ready (it starts while the scenarios that
 * need none run) and returns it; throws the runner's error if it failed.
 */
export async function sharedNode(timeoutMs = 40 * 60_000): Promise<SharedNode> {
  const file = process.env.QUARRY_E2E_NODE_STATE;
  if (!file)
    throw new Error(
      "no test node: the runner starts one for files named node-*.test.ts or marked `// quarry-e2e: needs-node`",
    );
  const state = await waitUntil(
    "the test node",
    () => {
      try {
        return JSON.parse(readFileSync(file, "utf8")) as NodeState;
      } catch {
        return undefined; // not written yet
      }
    },
    { timeoutMs, intervalMs: 250 },
  );
  if (state.error !== undefined) throw new Error(`the test node did not start: ${state.error}`);
  return state as SharedNode;
}

/** The taints of a node that is not Ready (yet): scenario pods tolerate them, so a slow start never strands one. */
export const notReadyTolerations = [
  { key: "node.kubernetes.io/not-ready", operator: "Exists" },
  { key: "node.kubernetes.io/unreachable", operator: "Exists" },
];

/**
 * A pod for the test node: hostNetwork (no CNI), the tools image with
 * imagePullPolicy Never for every container without an image of its own, no
 * ServiceAccount token, the not-ready tolerations, a 1 s grace period (a
 * `sleep` as PID 1 ignores SIGTERM), restartPolicy Never.
 */
export function nodePod(
  node: SharedNode,
  namespace: string,
  name: string,
  spec: Pod["spec"],
  metadata: Partial<KubeObject["metadata"]> = {},
): Pod {
  const withImage = (c: Container): Container => ({
    image: node.toolsImage,
    imagePullPolicy: "Never",
    ...c,
  });
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { ...metadata, name, namespace },
    spec: {
      hostNetwork: true,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      restartPolicy: "Never",
      terminationGracePeriodSeconds: 1,
      tolerations: notReadyTolerations,
      ...spec,
      ...(spec.initContainers ? { initContainers: spec.initContainers.map(withImage) } : {}),
      containers: spec.containers.map(withImage),
    },
  };
}

/** Waits until the pod satisfies `ready`; the error names its last status. */
export async function waitForPod(
  admin: KubeClient,
  namespace: string,
  name: string,
  ready: (p: Pod) => boolean,
  timeoutMs = 60_000,
): Promise<Pod> {
  let last: Pod | undefined;
  try {
    return await waitUntil(
      `pod ${namespace}/${name}`,
      async () => {
        last = await admin.get<Pod>(pods, namespace, name);
        return ready(last) ? last : undefined;
      },
      { timeoutMs, intervalMs: 250 },
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last status: ${JSON.stringify(last?.status ?? null)}`);
  }
}

/** Predicate for waitForPod: every init container exited 0 and every container runs. */
export function initDoneAndRunning(p: Pod): boolean {
  const inits = p.status?.initContainerStatuses ?? [];
  const ctrs = p.status?.containerStatuses ?? [];
  return (
    inits.length === (p.spec.initContainers?.length ?? 0) &&
    inits.every((s) => s.state?.terminated?.exitCode === 0) &&
    ctrs.length === p.spec.containers.length &&
    ctrs.every((s) => s.state?.running !== undefined)
  );
}

export interface ExecResult {
  stdout: Buffer;
  stderr: string;
  /** "Success", or "Failure" with the exit code in details.causes (reason ExitCode). */
  status: V1Status;
  exitCode: number;
}

function collector(chunks: Buffer[]): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  });
}

/**
 * Runs `command` in a container through the apiserver's exec subresource
 * (@kubernetes/client-node's Exec over WebSocket, with the admin kubeconfig),
 * stdout as bytes.
 */
export async function execInPod(
  cp: SharedControlPlane,
  namespace: string,
  pod: string,
  container: string,
  command: string[],
  timeoutMs = 30_000,
): Promise<ExecResult> {
  const kc = new KubeConfig();
  kc.loadFromFile(cp.adminKubeconfig);
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let status: V1Status | undefined;
  const ws = await new Exec(kc).exec(
    namespace,
    pod,
    container,
    command,
    collector(out),
    collector(err),
    null,
    false,
    (s) => {
      status = s;
    },
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      ws.close();
      reject(new Error(`exec ${command.join(" ")} in ${namespace}/${pod} took over ${timeoutMs} ms`));
    }, timeoutMs);
    ws.addEventListener("close", () => {
      clearTimeout(timer);
      resolve();
    });
  });
  if (!status) throw new Error(`exec ${command.join(" ")} in ${namespace}/${pod} closed without a status`);
  const code = status.details?.causes?.find((c) => c.reason === "ExitCode")?.message;
  return {
    stdout: Buffer.concat(out),
    stderr: Buffer.concat(err).toString("utf8"),
    status,
    exitCode: status.status === "Success" ? 0 : Number(code ?? -1),
  };
}

/** Reads a file out of a container as `tar cf - <path>` on stdout (the way that is always intact). */
export async function readFileFromPod(
  cp: SharedControlPlane,
  namespace: string,
  pod: string,
  container: string,
  path: string,
): Promise<Buffer> {
  const res = await execInPod(cp, namespace, pod, container, ["tar", "cf", "-", path]);
  if (res.exitCode !== 0) throw new Error(`tar cf - ${path} exited ${res.exitCode}: ${res.stderr}`);
  const want = path.replace(/^\/+/, "");
  const file = untar(res.stdout).get(want);
  if (!file)
    throw new Error(`${path} is not in the tar stream (${[...untar(res.stdout).keys()].join(", ")})`);
  return file;
}

/** The regular files of a ustar/GNU tar stream by name (long names of GNU 'L' records too). */
export function untar(tar: Buffer): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  let longName: string | undefined;
  for (let off = 0; off + 512 <= tar.length; ) {
    const h = tar.subarray(off, off + 512);
    if (h.every((b) => b === 0)) break;
    const str = (from: number, len: number) => {
      const s = h.subarray(from, from + len);
      const end = s.indexOf(0);
      return s.subarray(0, end < 0 ? len : end).toString("utf8");
    };
    const size = Number.parseInt(str(124, 12).trim() || "0", 8);
    const type = str(156, 1) || "0";
    const prefix = str(257, 6).startsWith("ustar") ? str(345, 155) : "";
    const name = longName ?? (prefix ? `${prefix}/${str(0, 100)}` : str(0, 100));
    const data = tar.subarray(off + 512, off + 512 + size);
    longName = undefined;
    if (type === "L") longName = data.toString("utf8").replace(/\0+$/, "");
    else if (type === "0") files.set(name.replace(/^\.\//, ""), Buffer.from(data));
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}
