// The embedded control plane for tests, the demo and benchmarks: etcd and a
// real kube-apiserver (RBAC on, token and service-account authentication) on
// loopback, built from the Go module proxy by build-binaries.sh and cached.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { request } from "node:https";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { makePki, type Pki } from "./pki.ts";

const here = dirname(fileURLToPath(import.meta.url));

export interface ControlPlane {
  dir: string;
  /** kube-apiserver's audit log (JSON lines, one per finished request) when started with `auditLog`. */
  auditLog?: string;
  server: string;
  caFile: string;
  adminToken: string;
  adminKubeconfig: string;
  /** Stops and starts kube-apiserver on the same port and etcd (for disruption tests). */
  restartApiserver(): Promise<void>;
  /** Sends etcd a signal: SIGSTOP freezes it (the apiserver's storage stops answering), SIGCONT thaws it. */
  signalEtcd(signal: "SIGSTOP" | "SIGCONT"): void;
  stop(): Promise<void>;
}

/** The directory of the control plane's binaries, and of `k8sCommands` (k8s.io/kubernetes/cmd/…) if named. */
export function buildBinaries(k8sCommands?: string[]): string {
  const out = execFileSync("bash", [join(here, "build-binaries.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    env: k8sCommands ? { ...process.env, QUARRY_K8S_BINARIES: k8sCommands.join(" ") } : process.env,
  });
  const lines = out.trim().split("\n");
  return lines[lines.length - 1]!;
}

/** kubectl of the control plane's Kubernetes version, built once and cached like the rest. */
export const kubectlBinary = (): string => join(buildBinaries(["kubectl"]), "kubectl");

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === "object" && addr ? addr.port : 0));
    });
  });
}

interface Proc {
  child: ChildProcess;
  exited: Promise<void>;
}

function startProcess(bin: string, args: string[], logFile: string): Proc {
  const fd = openSync(logFile, "a");
  const child = spawn(bin, args, { stdio: ["ignore", fd, fd] });
  closeSync(fd);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return { child, exited };
}

async function stopProcess(p: Proc | undefined, graceMs = 5000): Promise<void> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill("SIGTERM");
  const timer = setTimeout(() => p.child.kill("SIGKILL"), graceMs);
  await p.exited;
  clearTimeout(timer);
}

function probe(url: string, ca: Buffer, token: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { ca, headers: { Authorization: `Bearer ${token}` }, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", () => resolve(0));
    req.on("timeout", () => req.destroy());
    req.end();
  });
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, logFile: string) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} did not become ready within ${timeoutMs} ms; log tail:\n${tail(logFile)}`);
}

export function kubeconfigFor(server: string, caFile: string, user: string, token: string): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "quarry-test", cluster: { server, "certificate-authority": caFile } }],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: user, context: { cluster: "quarry-test", user } }],
    "current-context": user,
  });
}

export interface StartOptions {
  /** Picks each port (default freePort); a test gives a port already taken to prove the retry. */
  pickPort?: () => Promise<number>;
  /** Directory for state and logs; a fresh temp dir by default. */
  dir?: string;
  /** Leave the directory behind on stop (debugging). */
  keep?: boolean;
  log?: (msg: string) => void;
  /**
   * Write an audit log: every finished request's user, verb, object and code (level Metadata), so a
   * benchmark can say whose API calls a run cost. Off by default: it costs the apiserver CPU.
   */
  auditLog?: boolean;
  /**
   * Turn the ServiceAccount admission plugin on, as a real cluster has it: pods get their
   * token volume, and a pod naming a missing ServiceAccount is refused. For in-cluster installs
   * (charts with default values), with a node whose controller-manager creates default accounts.
   */
  serviceAccountAdmission?: boolean;
}

/** Every request once, when it finishes (long-running ones too), without bodies. */
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
  - level: Metadata
`;

export async function startControlPlane(opts: StartOptions = {}): Promise<ControlPlane> {
  const log = opts.log ?? ((m: string) => process.stderr.write(`[controlplane] ${m}\n`));
  const bin = buildBinaries();
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), "quarry-cp-"));
  mkdirSync(dir, { recursive: true });
  const pkiDir = join(dir, "pki");
  mkdirSync(pkiDir, { recursive: true });
  const pki: Pki = makePki(pkiDir);
  const adminToken = randomBytes(24).toString("hex");
  const tokenFile = join(dir, "tokens.csv");
  writeFileSync(tokenFile, `${adminToken},quarry-admin,quarry-admin,"system:masters"\n`);
  const etcdLog = join(dir, "etcd.log");
  const apiLog = join(dir, "kube-apiserver.log");
  const auditLog = opts.auditLog ? join(dir, "audit.log") : undefined;
  if (auditLog) writeFileSync(join(dir, "audit-policy.yaml"), AUDIT_POLICY);
  const ca = readFileSync(pki.caCert);

  // A free port is picked, closed, then bound by etcd or kube-apiserver a moment later: another
  // process (a parallel test run, any outgoing connection's ephemeral port) can take it meanwhile.
  // Such a start is retried on new ports.
  let server = "";
  let apiArgs: string[] = [];
  let etcd: Proc | undefined;
  let apiserver: Proc | undefined;
  const startApiserver = async () => {
    apiserver = startProcess(join(bin, "kube-apiserver"), apiArgs, apiLog);
    const started = { etcd, apiserver };
    await waitFor(
      "kube-apiserver",
      async () => {
        for (const [name, p] of Object.entries(started)) {
          if (p && (p.child.exitCode !== null || p.child.signalCode !== null)) {
            const log = name === "etcd" ? etcdLog : apiLog;
            throw new Error(`${name} exited while kube-apiserver was starting; log tail:\n${tail(log)}`);
          }
        }
        return (await probe(`${server}/readyz`, ca, adminToken)) === 200;
      },
      90_000,
      apiLog,
    );
  };
  const stopBoth = async () => {
    await stopProcess(apiserver);
    await stopProcess(etcd);
  };
  const stop = async () => {
    await stopBoth();
    if (!opts.keep) rmSync(dir, { recursive: true, force: true });
  };

  log(`starting etcd and kube-apiserver in ${dir}`);
  for (let attempt = 1; ; attempt++) {
    const pick = opts.pickPort ?? freePort;
    const [etcdClient, etcdPeer, apiPort] = [await pick(), await pick(), await pick()];
    server = `https://127.0.0.1:${apiPort}`;
    etcd = startEtcd(bin, dir, etcdClient, etcdPeer, etcdLog);
    apiArgs = apiserverArgs({ etcdClient, apiPort, pki, tokenFile, dir, auditLog, opts });
    try {
      await startApiserver();
      break;
    } catch (err) {
      await stopBoth();
      if (attempt < PORT_ATTEMPTS && portTaken(etcdLog, apiLog)) {
        log(`a port was taken before it was bound (attempt ${attempt}); starting again on new ports`);
        for (const f of [etcdLog, apiLog]) renameSync(f, `${f}.attempt-${attempt}`);
        rmSync(join(dir, "etcd-data"), { recursive: true, force: true });
        continue;
      }
      if (!opts.keep) rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }
  const adminKubeconfig = join(dir, "admin.kubeconfig");
  writeFileSync(adminKubeconfig, kubeconfigFor(server, pki.caCert, "quarry-admin", adminToken));
  log(`kube-apiserver ready at ${server} (admin kubeconfig ${adminKubeconfig})`);
  return {
    dir,
    auditLog,
    server,
    caFile: pki.caCert,
    adminToken,
    adminKubeconfig,
    restartApiserver: async () => {
      await stopProcess(apiserver);
      await startApiserver();
    },
    signalEtcd: (signal) => {
      etcd?.child.kill(signal);
    },
    stop,
  };
}

const PORT_ATTEMPTS = 3;

function portTaken(...logs: string[]): boolean {
  return logs.some((f) => tail(f).includes("address already in use"));
}

function tail(file: string): string {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-30).join("\n");
  } catch {
    return "";
  }
}

function startEtcd(bin: string, dir: string, etcdClient: number, etcdPeer: number, etcdLog: string): Proc {
  return startProcess(
    join(bin, "etcd"),
    [
      `--data-dir=${join(dir, "etcd-data")}`,
      `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=default=http://127.0.0.1:${etcdPeer}`,
      "--unsafe-no-fsync",
      "--log-level=warn",
    ],
    etcdLog,
  );
}

function apiserverArgs(a: {
  etcdClient: number;
  apiPort: number;
  pki: Pki;
  tokenFile: string;
  dir: string;
  auditLog: string | undefined;
  opts: StartOptions;
}): string[] {
  const { etcdClient, apiPort, pki, tokenFile, dir, auditLog, opts } = a;
  const apiArgs = [
    `--etcd-servers=http://127.0.0.1:${etcdClient}`,
    `--secure-port=${apiPort}`,
    "--bind-address=127.0.0.1",
    "--advertise-address=127.0.0.1",
    `--tls-cert-file=${pki.servingCert}`,
    `--tls-private-key-file=${pki.servingKey}`,
    `--client-ca-file=${pki.caCert}`,
    `--token-auth-file=${tokenFile}`,
    "--authorization-mode=Node,RBAC",
    "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
    `--service-account-key-file=${pki.saPub}`,
    `--service-account-signing-key-file=${pki.saKey}`,
    // not a private range (TEST-CLUSTER.md): the kubernetes Service is 198.18.1.1, which the
    // test node serves (node.ts: SERVICE_VIP); pods are 198.18.0.0/24
    "--service-cluster-ip-range=198.18.1.0/24",
    "--endpoint-reconciler-type=none",
    // off unless asked: without a controller-manager nobody creates namespaces' default
    // ServiceAccount, and the e2e pods name ServiceAccounts that do not exist
    ...(opts.serviceAccountAdmission ? [] : ["--disable-admission-plugins=ServiceAccount"]),
    "--allow-privileged=true",
    "--kubelet-preferred-address-types=Hostname,InternalIP",
    `--cert-dir=${join(dir, "cert")}`,
    // MutatingAdmissionPolicy is beta and off by default in 1.34: Quarry's shard-label policy
    // (docs/operator-guide.md §11) uses it where the cluster offers it
    "--feature-gates=MutatingAdmissionPolicy=true",
    "--runtime-config=admissionregistration.k8s.io/v1beta1=true",
    "--v=1",
  ];
  if (auditLog) {
    apiArgs.push(
      `--audit-policy-file=${join(dir, "audit-policy.yaml")}`,
      `--audit-log-path=${auditLog}`,
      "--audit-log-format=json",
    );
  }
  return apiArgs;
}
