// A real node for the e2e harness, against a running control plane: Debian's
// containerd 1.6 + runc, kubelet v1.34, kube-controller-manager (garbage
// collection, ServiceAccounts and their tokens, namespace deletion) and
// kube-scheduler, all as local processes, no systemd. The reasons for each
// setting are beside it below and in docs/testing.md ("Real node").
//
// Pod network (pod-network.ts): Debian's CNI bridge plugin puts pods on a
// bridge of their own, 198.18.0.0/24 (not a private range: traffic to those is
// flagged on these machines), with the host at 198.18.0.1; nothing is routed
// beyond the host. There is no kube-proxy: the kubernetes Service's address
// (198.18.1.1:443) is served by a forwarder to the apiserver, so in-cluster
// config works as in a real cluster. Pods use the locally imported images with
// imagePullPolicy Never.
//
// One node runs per machine at a time (a pid lock in /run/quarry): kubelets
// share fixed paths (/var/lib/kubelet/device-plugins, /var/log/containers) and
// the kubepods cgroups, where each treats the other's pods as orphans.
import { type ChildProcess, spawn } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type KubeClient, type KubeObject, type ResourceType, RestKubeClient } from "@quarry/kube";
import { freePort } from "./controlplane.ts";
import { buildNodeImages, type NodeImages, PAUSE_IMAGE, TOOLS_IMAGE } from "./node-images.ts";
import { issueClientCert } from "./pki.ts";
import {
  POD_GATEWAY,
  type PodNetwork,
  removePodNetwork,
  startPodNetwork,
  writeCniConfig,
} from "./pod-network.ts";

const here = dirname(fileURLToPath(import.meta.url));

/** The Node's name, its --hostname-override: the apiserver reaches the kubelet by it (Hostname first). */
export const NODE_NAME = "127.0.0.1";
export { PAUSE_IMAGE, POD_GATEWAY, TOOLS_IMAGE };

const NODE_DIR_PREFIX = "quarry-node-";
const LOCK_FILE = "/run/quarry/e2e-node.lock";

interface NodeObject extends KubeObject {
  spec?: { taints?: { key: string; effect: string }[] };
  status?: { conditions?: { type: string; status: string }[] };
}

const podsRt: ResourceType = { group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true };
const nodesRt: ResourceType = { group: "", version: "v1", plural: "nodes", kind: "Node", namespaced: false };

/** The part of a control plane a node needs; the CA key and SA key sit beside `caFile` (pki.ts). */
export interface NodeControlPlane {
  server: string;
  caFile: string;
  adminKubeconfig: string;
}

export interface TestNode {
  name: string;
  dir: string;
  pauseImage: string;
  toolsImage: string;
  /** The host's address on the pod network: a server pods must reach listens here. */
  hostAddress: string;
  /** Milliseconds from startNode to a registered Node with every process healthy. */
  startMs: number;
  /** Deletes the node's pods, stops every process, unmounts and removes its directory. */
  stop(): Promise<void>;
}

export interface NodeOptions {
  /** Leave the node's directory (logs, kubelet and containerd state) behind on stop. */
  keep?: boolean;
  log?: (msg: string) => void;
  /** Aborts a start under way (the runner's SIGINT); what was started is stopped. */
  signal?: AbortSignal;
  /** How long to wait for another run's node to stop (default 30 min). */
  lockTimeoutMs?: number;
}

interface Proc {
  name: string;
  child: ChildProcess;
  logFile: string;
  exited: Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs a command; resolves with stdout, rejects with its stderr tail. stderr can go to the parent. */
function exec(
  cmd: string,
  args: string[],
  opts: { stderr?: "inherit" | "pipe"; timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", opts.stderr ?? "pipe"], signal: opts.signal });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on("data", (b: Buffer) => out.push(b));
    child.stderr?.on("data", (b: Buffer) => err.push(b));
    const timer = opts.timeoutMs ? setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs) : undefined;
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(Buffer.concat(out).toString("utf8"));
      else
        reject(
          new Error(
            `${cmd} ${args.join(" ")} failed (${code ?? signal}): ${Buffer.concat(err).toString("utf8").slice(-2000)}`,
          ),
        );
    });
  });
}

/** kubelet, kube-controller-manager and kube-scheduler's directory; Debian packages installed (build-node.sh). */
export async function buildNodeBinaries(signal?: AbortSignal): Promise<string> {
  const out = await exec("bash", [join(here, "build-node.sh")], { stderr: "inherit", signal });
  const lines = out.trim().split("\n");
  return lines[lines.length - 1]!;
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks), or undefined when no such process. */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

function processes(): number[] {
  return readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
    .filter((pid) => pid !== process.pid);
}

function readProc(pid: number, file: string): string {
  try {
    return readFileSync(`/proc/${pid}/${file}`, "utf8");
  } catch {
    return "";
  }
}

/** Processes whose command line mentions `dir` (containerd, its shims, kubelet, the controllers). */
function processesUsing(dir: string): number[] {
  return processes().filter((pid) => readProc(pid, "cmdline").split("\0").join(" ").includes(`${dir}/`));
}

/** Every process below `roots` (a shim's containers: pause, init and main containers' processes). */
function descendants(roots: number[]): number[] {
  const children = new Map<number, number[]>();
  for (const pid of processes()) {
    const stat = readProc(pid, "stat");
    if (!stat) continue;
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  const found: number[] = [];
  const queue = [...roots];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift())
    for (const child of children.get(pid) ?? []) {
      found.push(child);
      queue.push(child);
    }
  return found;
}

function killAll(pids: number[], signal: NodeJS.Signals = "SIGKILL"): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {}
  }
}

/** Whether a process exists and is not a zombie. */
function running(pid: number): boolean {
  const stat = readProc(pid, "stat");
  return stat !== "" && stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
}

async function waitGone(pids: number[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (pids.some(running) && Date.now() < deadline) await sleep(50);
}

/** Mount points at or under `dir`, deepest first (from /proc/self/mountinfo, octal escapes decoded). */
function mountsUnder(dir: string): string[] {
  const points = readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((l) => l.split(" ")[4])
    .filter((p): p is string => !!p)
    .map((p) => p.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8))))
    .filter((p) => p === dir || p.startsWith(`${dir}/`));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

async function unmountAll(dir: string): Promise<void> {
  // a mount can be stacked on itself (the kubelet bind-mounts its root dir): repeat until none
  for (let round = 0; round < 5; round++) {
    const points = mountsUnder(dir);
    if (points.length === 0) return;
    for (const p of points) await exec("umount", [p]).catch(() => exec("umount", ["-l", p]).catch(() => {}));
  }
}

/**
 * Kills every process a node left (by its directory in their command lines:
 * containerd, its shims, kubelet, the controllers; and the containers below
 * the shims), unmounts what it mounted and removes the directory unless
 * it was kept. Used at stop and for the remains of a run that was killed.
 */
async function sweep(dir: string, remove: boolean): Promise<void> {
  const own = processesUsing(dir);
  const pids = [...descendants(own), ...own];
  killAll(pids);
  await waitGone(pids, 5000);
  await unmountAll(dir);
  // --one-file-system: never follow a mount that survived into another file system
  if (remove) await exec("rm", ["-rf", "--one-file-system", dir]).catch(() => {});
}

/** /run/containerd/s sockets nobody listens on and runc state of containers that are gone. */
function cleanRunContainerd(): void {
  const listening = new Set(
    readFileSync("/proc/net/unix", "utf8")
      .split("\n")
      .map((l) => l.trim().split(/\s+/)[7])
      .filter(Boolean),
  );
  const sockets = "/run/containerd/s";
  if (existsSync(sockets))
    for (const s of readdirSync(sockets))
      if (!listening.has(join(sockets, s)))
        try {
          unlinkSync(join(sockets, s));
        } catch {}
  const runc = "/run/containerd/runc";
  if (existsSync(runc))
    for (const ns of readdirSync(runc))
      for (const id of readdirSync(join(runc, ns))) {
        let pid = 0;
        try {
          pid = JSON.parse(readFileSync(join(runc, ns, id, "state.json"), "utf8")).init_process_pid ?? 0;
        } catch {}
        if (!pid || startTime(pid) === undefined)
          rmSync(join(runc, ns, id), { recursive: true, force: true });
      }
}

function ownerAlive(file: string): { pid: number; alive: boolean } {
  const [pid, start] = readFileSync(file, "utf8").trim().split(" ");
  const n = Number(pid);
  return { pid: n, alive: !!n && start !== undefined && startTime(n) === start };
}

/** Takes the machine's node lock, waiting for a live holder; a dead holder's lock is taken over. */
async function acquireLock(log: (m: string) => void, timeoutMs: number, signal?: AbortSignal) {
  mkdirSync(dirname(LOCK_FILE), { recursive: true });
  const mine = `${process.pid} ${startTime(process.pid)}`;
  const deadline = Date.now() + timeoutMs;
  let told = false;
  for (;;) {
    signal?.throwIfAborted();
    try {
      writeFileSync(LOCK_FILE, mine, { flag: "wx" });
      return () => {
        try {
          if (readFileSync(LOCK_FILE, "utf8") === mine) unlinkSync(LOCK_FILE);
        } catch {}
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    let holder: { pid: number; alive: boolean };
    try {
      holder = ownerAlive(LOCK_FILE);
    } catch {
      continue; // released between our write and read
    }
    if (!holder.alive) {
      log(`taking over the node lock of pid ${holder.pid}, which is gone`);
      try {
        unlinkSync(LOCK_FILE);
      } catch {}
      continue;
    }
    if (Date.now() > deadline)
      throw new Error(`another e2e run (pid ${holder.pid}) kept its test node for ${timeoutMs} ms`);
    if (!told) log(`waiting for the test node of another e2e run (pid ${holder.pid}) to stop`);
    told = true;
    await sleep(1000);
  }
}

/** Removes what killed runs left: their processes, mounts and directories (kept ones stay, unmounted). */
async function cleanStale(log: (m: string) => void): Promise<void> {
  for (const entry of readdirSync(tmpdir())) {
    if (!entry.startsWith(NODE_DIR_PREFIX)) continue;
    const dir = join(tmpdir(), entry);
    try {
      if (ownerAlive(join(dir, "owner")).alive) continue;
    } catch {}
    const keep = existsSync(join(dir, "keep"));
    if (processesUsing(dir).length > 0 || mountsUnder(dir).length > 0 || !keep) {
      log(`cleaning up ${dir}, left by a run that did not stop its node`);
      await sweep(dir, !keep);
    }
  }
  cleanRunContainerd();
}

function startProcess(name: string, bin: string, args: string[], dir: string): Proc {
  const logFile = join(dir, `${name}.log`);
  const fd = openSync(logFile, "a");
  const child = spawn(bin, args, { stdio: ["ignore", fd, fd] });
  closeSync(fd);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.on("error", () => {});
  return { name, child, logFile, exited };
}

async function stopProcess(p: Proc | undefined, graceMs = 10_000): Promise<void> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill("SIGTERM");
  const timer = setTimeout(() => p.child.kill("SIGKILL"), graceMs);
  await p.exited;
  clearTimeout(timer);
}

function logTail(p: Proc, lines = 40): string {
  try {
    return readFileSync(p.logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

/** Polls `check` until true; fails early with the log of a process that exited. */
async function waitReady(
  what: string,
  check: () => Promise<boolean>,
  procs: Proc[],
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    signal?.throwIfAborted();
    for (const p of procs)
      if (p.child.exitCode !== null || p.child.signalCode !== null)
        throw new Error(
          `${p.name} exited (${p.child.exitCode ?? p.child.signalCode}) before ${what}; log:\n${logTail(p)}`,
        );
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline)
      throw new Error(
        `${what} not within ${timeoutMs} ms; logs:\n${procs.map((p) => `== ${p.name}\n${logTail(p)}`).join("\n")}`,
      );
    await sleep(200);
  }
}

/** GET https://127.0.0.1:<port>/healthz of a component with a self-signed serving cert. */
function healthz(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(url, { rejectUnauthorized: false, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on("error", () => resolve(false));
    req.on("timeout", () => req.destroy());
    req.end();
  });
}

function kubeconfig(cp: NodeControlPlane, user: string, cert: { cert: string; key: string }): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "quarry-test", cluster: { server: cp.server, "certificate-authority": cp.caFile } }],
    users: [{ name: user, user: { "client-certificate": cert.cert, "client-key": cert.key } }],
    contexts: [{ name: user, context: { cluster: "quarry-test", user } }],
    "current-context": user,
  });
}

function containerdConfig(dir: string, socket: string): string {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `version = 2
root = "${dir}/containerd/root"
state = "${dir}/containerd/state"

[grpc]
  address = "${socket}"

[ttrpc]
  address = "${socket}.ttrpc"

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "${dir}/containerd/opt"

[${cri}]
  # the pause image imported from node-images.ts; nothing is pulled
  sandbox_image = "${PAUSE_IMAGE}"
  # the VM lacks CAP_SYS_RESOURCE: without this, sandboxes fail with
  # "can't get final child's PID from pipe: EOF"
  restrict_oom_score_adj = true
  # exec/attach streaming on loopback, a port of its own
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"

[${cri}.registry]
  # per-registry hosts.toml (certs.d/<host:port>/): trustPlainHttpRegistry adds a test registry
  config_path = "${dir}/containerd/certs.d"

[${cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[${cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[${cri}.containerd.runtimes.runc.options]
  # no systemd here; the kubelet's cgroupDriver is cgroupfs
  SystemdCgroup = false

[${cri}.cni]
  # Debian's containernetworking-plugins; the bridge network pod-network.ts writes
  bin_dir = "/usr/lib/cni"
  conf_dir = "${dir}/cni/net.d"
`;
}

function kubeletConfig(dir: string, socket: string, port: number, healthzPort: number): string {
  return JSON.stringify(
    {
      apiVersion: "kubelet.config.k8s.io/v1beta1",
      kind: "KubeletConfiguration",
      containerRuntimeEndpoint: `unix://${socket}`,
      address: "127.0.0.1",
      port,
      readOnlyPort: 0,
      healthzBindAddress: "127.0.0.1",
      healthzPort,
      // the test apiserver has no kubelet client certificate: exec and logs reach the kubelet
      // anonymously, which only loopback can do (with webhook auth exec fails "Unauthorized")
      authentication: { anonymous: { enabled: true }, webhook: { enabled: false }, x509: {} },
      authorization: { mode: "AlwaysAllow" },
      cgroupDriver: "cgroupfs",
      failSwapOn: false,
      // out of /var/log/pods and /usr/libexec/kubernetes: every path the kubelet allows moved under dir
      podLogsDir: join(dir, "pod-logs"),
      volumePluginDir: join(dir, "volume-plugins"),
      // imported images cannot be pulled again: never garbage-collect them, and no disk-pressure
      // taint on a test machine with a fuller disk
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      evictionHard: {
        "memory.available": "50Mi",
        "nodefs.available": "1%",
        "nodefs.inodesFree": "1%",
        "imagefs.available": "1%",
      },
      serializeImagePulls: false,
    },
    null,
    2,
  );
}

/** Starts a node against `cp` and returns once its Node is registered and every process is healthy. */
export async function startNode(cp: NodeControlPlane, opts: NodeOptions = {}): Promise<TestNode> {
  const log = opts.log ?? ((m: string) => process.stderr.write(`[node] ${m}\n`));
  const { signal } = opts;
  const t0 = Date.now();
  const phases: string[] = [];
  const phase = (what: string) => phases.push(`${what} ${((Date.now() - t0) / 1000).toFixed(1)}`);
  const [bin, images] = await Promise.all([buildNodeBinaries(signal), buildNodeImages()]);
  phase("binaries+images");
  const release = await acquireLock(log, opts.lockTimeoutMs ?? 30 * 60_000, signal);
  phase("lock");
  const procs: Proc[] = [];
  let dir = "";
  const admin: KubeClient = RestKubeClient.fromEnvironment(cp.adminKubeconfig);
  let network: PodNetwork | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      try {
        if (procs.some((p) => p.name === "kubelet")) await deleteNodePods(admin, log);
        const byName = (n: string) => procs.find((p) => p.name === n);
        await Promise.all([
          stopProcess(byName("kube-controller-manager")),
          stopProcess(byName("kube-scheduler")),
        ]);
        await stopProcess(byName("kubelet"));
        // containers the kubelet did not stop: containerd's shims keep them running across containerd
        if (dir) killAll(descendants(processesUsing(dir)));
        await stopProcess(byName("containerd"));
        await network?.stop();
        await removePodNetwork();
        if (dir) await sweep(dir, !opts.keep);
        cleanRunContainerd();
      } finally {
        release();
      }
    })());
  try {
    await cleanStale(log);
    await removePodNetwork();
    phase("stale cleanup");
    dir = mkdtempSync(join(tmpdir(), NODE_DIR_PREFIX));
    writeFileSync(join(dir, "owner"), `${process.pid} ${startTime(process.pid)}`);
    if (opts.keep) writeFileSync(join(dir, "keep"), "");
    for (const d of ["kubelet", "pod-logs", "volume-plugins", "cni/net.d", "cni/ipam", "pki"])
      mkdirSync(join(dir, d), { recursive: true });
    writeCniConfig(join(dir, "cni/net.d"), join(dir, "cni/ipam"));
    network = await startPodNetwork(cp.server, log);
    phase("pod network");
    log(`starting containerd, kubelet, kube-controller-manager and kube-scheduler in ${dir}`);

    const pkiDir = dirname(cp.caFile);
    const ca = { caCert: cp.caFile, caKey: join(pkiDir, "ca.key") };
    const pki = join(dir, "pki");
    const kubeconfigs: Record<string, string> = {};
    for (const [name, user, groups] of [
      // the Node authorizer and NodeRestriction admit a kubelet by this name and group
      ["kubelet", `system:node:${NODE_NAME}`, ["system:nodes"]],
      // the default RBAC bindings of these users; kcm's controllers act as their own ServiceAccounts
      ["kube-controller-manager", "system:kube-controller-manager", []],
      ["kube-scheduler", "system:kube-scheduler", []],
    ] as const) {
      kubeconfigs[name] = join(dir, `${name}.kubeconfig`);
      writeFileSync(
        kubeconfigs[name],
        kubeconfig(cp, user, issueClientCert(ca, pki, name, user, [...groups])),
      );
    }

    // containerd, then the images (the kubelet's first sandbox needs the pause image)
    const socket = join(dir, "containerd.sock");
    writeFileSync(join(dir, "containerd.toml"), containerdConfig(dir, socket));
    const containerd = startProcess(
      "containerd",
      "containerd",
      ["--config", join(dir, "containerd.toml")],
      dir,
    );
    procs.push(containerd);
    const ctr = (...args: string[]) => exec("ctr", ["--address", socket, "--namespace", "k8s.io", ...args]);
    await waitReady("containerd answers", async () => !!(await ctr("version")), [containerd], 30_000, signal);
    phase("containerd");

    const [kubeletPort, kubeletHealthz, kcmPort, schedulerPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    // the controllers need no node: start them while the images import
    const kcm = startProcess(
      "kube-controller-manager",
      join(bin, "kube-controller-manager"),
      [
        `--kubeconfig=${kubeconfigs["kube-controller-manager"]}`,
        // everything but what needs a cloud or node CIDRs; nodelifecycle lifts the not-ready
        // taint once the pod network makes the node Ready
        "--controllers=*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-route",
        "--use-service-account-credentials=true",
        `--service-account-private-key-file=${join(pkiDir, "sa.key")}`,
        `--root-ca-file=${cp.caFile}`,
        "--leader-elect=false",
        "--bind-address=127.0.0.1",
        `--secure-port=${kcmPort}`,
        "--v=1",
      ],
      dir,
    );
    const scheduler = startProcess(
      "kube-scheduler",
      join(bin, "kube-scheduler"),
      [
        `--kubeconfig=${kubeconfigs["kube-scheduler"]}`,
        "--leader-elect=false",
        "--bind-address=127.0.0.1",
        `--secure-port=${schedulerPort}`,
        "--v=1",
      ],
      dir,
    );
    procs.push(kcm, scheduler);
    await importImages(ctr, images);
    phase("images imported");

    writeFileSync(join(dir, "kubelet.json"), kubeletConfig(dir, socket, kubeletPort, kubeletHealthz));
    const kubelet = startProcess(
      "kubelet",
      join(bin, "kubelet"),
      [
        `--config=${join(dir, "kubelet.json")}`,
        `--kubeconfig=${kubeconfigs.kubelet}`,
        `--root-dir=${join(dir, "kubelet")}`,
        `--hostname-override=${NODE_NAME}`,
        "--v=1",
      ],
      dir,
    );
    procs.push(kubelet);
    await waitReady(
      `Node ${NODE_NAME} registered`,
      async () => {
        await admin.get<KubeObject>(nodesRt, undefined, NODE_NAME);
        // the kubelet's healthz port is plain HTTP
        return (await fetch(`http://127.0.0.1:${kubeletHealthz}/healthz`)).ok;
      },
      procs,
      90_000,
      signal,
    );
    phase("Node registered");
    await waitReady(
      `Node ${NODE_NAME} Ready and untainted`,
      async () => {
        const n = await admin.get<NodeObject>(nodesRt, undefined, NODE_NAME);
        const ready = n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
        return !!ready && !(n.spec?.taints ?? []).some((t) => t.key.startsWith("node.kubernetes.io/"));
      },
      procs,
      90_000,
      signal,
    );
    phase("Node Ready");
    await waitReady(
      "kube-controller-manager and kube-scheduler healthy",
      async () =>
        (await healthz(`https://127.0.0.1:${kcmPort}/healthz`)) &&
        (await healthz(`https://127.0.0.1:${schedulerPort}/healthz`)),
      procs,
      60_000,
      signal,
    );
    const startMs = Date.now() - t0;
    phase("controllers healthy");
    log(`Node ${NODE_NAME} ready in ${(startMs / 1000).toFixed(1)} s (s since start: ${phases.join(", ")})`);
    return {
      name: NODE_NAME,
      dir,
      pauseImage: PAUSE_IMAGE,
      toolsImage: TOOLS_IMAGE,
      hostAddress: POD_GATEWAY,
      startMs,
      stop,
    };
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
}

async function importImages(ctr: (...args: string[]) => Promise<string>, images: NodeImages): Promise<void> {
  await Promise.all(
    [images.pause, images.tools].map(async (img) => {
      await ctr("images", "import", img.tar);
      const listed = await ctr("images", "list", "--quiet");
      if (!listed.split("\n").includes(img.name))
        throw new Error(`ctr images import ${basename(img.tar)} did not name ${img.name}:\n${listed}`);
    }),
  );
}

/** Deletes every pod bound to the node (1 s grace) and waits until the kubelet has stopped them. */
async function deleteNodePods(admin: KubeClient, log: (m: string) => void): Promise<void> {
  const onNode = async () =>
    (await admin.list<KubeObject>(podsRt, undefined, { fieldSelector: `spec.nodeName=${NODE_NAME}` })).items;
  try {
    const pods = await onNode();
    if (pods.length === 0) return;
    log(`deleting ${pods.length} pod(s) left on the node`);
    const del = (body: unknown) =>
      Promise.all(
        pods.map((p) => admin.delete(podsRt, p.metadata.namespace, p.metadata.name!, body).catch(() => {})),
      );
    await del({ gracePeriodSeconds: 1 });
    const deadline = Date.now() + 20_000;
    while ((await onNode()).length > 0) {
      if (Date.now() > deadline) {
        log("pods still there after 20 s; deleting them without waiting for the kubelet");
        await del({ gracePeriodSeconds: 0 });
        return;
      }
      await sleep(250);
    }
  } catch (err) {
    log(`could not delete the node's pods: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * Whether an e2e scenario file needs the node: named node-*, or carrying the
 * marker line (pipe-* scenarios that run pods carry it; pipe-crd-validation needs no node).
 */
/**
 * Lets the node's containerd pull from `host` (host:port, a test registry) over plain HTTP, as a
 * cluster's containerd is configured for an in-house registry; read at each pull, no restart.
 */
export function trustPlainHttpRegistry(nodeDir: string, host: string): void {
  const dir = join(nodeDir, "containerd", "certs.d", host);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "hosts.toml"),
    `server = "http://${host}"\n\n[host."http://${host}"]\n  capabilities = ["pull", "resolve"]\n`,
  );
}

export function needsNode(file: string): boolean {
  if (basename(file).startsWith("node-")) return true;
  try {
    return readFileSync(file, "utf8").includes(NODE_MARKER);
  } catch {
    return false;
  }
}

/** A line in a scenario file that makes the runner start the node for it. */
export const NODE_MARKER = "// quarry-e2e: needs-node";
