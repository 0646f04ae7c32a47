// All-in-one mode of a scenario (docs/testing.md, "Both modes"): the services
// a scenario starts that are components of services/all-in-one run as those
// components of one process, under ServiceAccount quarry-all-in-one bound to
// the rules of each started component's chart and of charts/quarry (its
// Leases), as the umbrella chart's global.mode=all-in-one binds them.
//
// What the fleet's verbs mean here:
// - start(X): X joins the process. A process already running without X is
//   stopped (SIGTERM) and started again with X among QUARRY_COMPONENTS, as a
//   `helm upgrade` enabling X rolls the one Deployment.
// - kill(X) of the handle start returned: signals the one process, so every
//   component in it goes down with X; start(X) then starts the process again
//   with every component it had (a pod's restart).
// - stop(X): X leaves; the process goes on without it (restarted), or stops
//   when X was the last.
// Each component's env (QUARRY_GIT_CACHE_DIR, hub URLs, ...) goes into the one
// process's env; two components asking for one variable with different values
// is refused, naming both.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type KubeClient, RestKubeClient } from "@quarry/kube";
import { applyObject } from "./apply.ts";
import { type ControlPlaneInfo, loadServiceRbac, type ServiceIdentity, tokenKubeconfig } from "./identity.ts";
import { kinds } from "./kinds.ts";
import { type RunningService, startService } from "./service.ts";

export const SERVICE_MODES = ["fleet", "all-in-one"] as const;
/** fleet: one process per service; all-in-one: the components in one services/all-in-one process. */
export type ServiceMode = (typeof SERVICE_MODES)[number];

export const ALL_IN_ONE_SA = "quarry-all-in-one";
/** charts/quarry/rbac.yaml: what the process needs as itself (its bucket Leases). */
const ALL_IN_ONE_CHART = "quarry";

/** Each service that is a component of services/all-in-one, and its QUARRY_COMPONENTS name. */
export const COMPONENT_OF: Readonly<Record<string, string>> = {
  "lifecycle-controller": "lifecycle",
  "run-controller": "run",
  "cluster-resolver": "cluster",
  "git-resolver": "git",
  "bundle-resolver": "bundle",
  "pipe-resolver": "pipe",
  "http-resolver": "http",
  "hub-resolver": "hub",
};

export const isComponent = (service: string): boolean => service in COMPONENT_OF;

/** QUARRY_COMPONENTS for these services, in the order the process lists its components. */
export function componentsOf(services: Iterable<string>): string {
  const wanted = new Set([...services].map((s) => COMPONENT_OF[s]));
  return Object.values(COMPONENT_OF)
    .filter((c) => wanted.has(c))
    .join(",");
}

/** One env for the process from each member's; a variable two members set differently is refused. */
export function mergeEnv(members: ReadonlyMap<string, Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  const from: Record<string, string> = {};
  for (const [service, env] of members)
    for (const [k, v] of Object.entries(env)) {
      if (k in out && out[k] !== v)
        throw new Error(
          `all-in-one mode: ${from[k]} and ${service} set ${k} differently (${out[k]} and ${v}); one process has one env`,
        );
      out[k] = v;
      from[k] ??= service;
    }
  return out;
}

export interface AllInOneHostOptions {
  admin: KubeClient;
  cp: ControlPlaneInfo;
  namespace: string;
  logFile: string;
  /** Env every member gets (the scenario's namespaces), under each member's own. */
  baseEnv: Record<string, string>;
}

interface Member {
  env: Record<string, string>;
  /** Resolves the handle's `exited` when the component's run ends (its process died, or it left). */
  end?: (r: Exit) => void;
}

type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** The one all-in-one process of a scenario and the components in it. */
export class AllInOneHost {
  private readonly members = new Map<string, Member>();
  private readonly bound = new Set<string>();
  private proc: RunningService | undefined;
  /** The process is being replaced on purpose: its exit ends no member's run. */
  private replacing: RunningService | undefined;
  private id: ServiceIdentity | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  /** Processes a handle's kill() signalled: their exit is awaited before the next start. */
  private readonly killed = new WeakSet<RunningService>();

  private readonly opts: AllInOneHostOptions;

  constructor(opts: AllInOneHostOptions) {
    this.opts = opts;
  }

  /** The running process (undefined before the first start and after it died or stopped). */
  get process(): RunningService | undefined {
    return this.proc;
  }

  /** The services in the process. */
  get services(): string[] {
    return [...this.members.keys()];
  }

  /** quarry-all-in-one with the rules of `services`' charts (and charts/quarry's) bound, as the chart binds them. */
  async identity(services: Iterable<string> = []): Promise<ServiceIdentity> {
    const { admin, cp, namespace } = this.opts;
    if (!this.id) {
      await applyObject(admin, {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: ALL_IN_ONE_SA, namespace },
      });
      // a file of this namespace's own: scenarios run side by side on one control plane
      const kubeconfig = await tokenKubeconfig(
        admin,
        cp,
        namespace,
        ALL_IN_ONE_SA,
        `all-in-one-${namespace}`,
        "all-in-one",
      );
      this.id = {
        serviceAccount: ALL_IN_ONE_SA,
        namespace,
        kubeconfig,
        client: RestKubeClient.fromEnvironment(kubeconfig),
      };
    }
    for (const chart of [ALL_IN_ONE_CHART, ...services]) {
      if (this.bound.has(chart)) continue;
      await bindRules(admin, chart, namespace);
      this.bound.add(chart);
    }
    return this.id;
  }

  /**
   * Puts `services` (components, each with its env) in the process and returns a handle for each;
   * (re)starts the process when it is not running with exactly these members.
   */
  start(
    services: readonly { service: string; env: Record<string, string> }[],
    readyTimeoutMs = 60_000,
  ): Promise<RunningService[]> {
    return this.serial(async () => {
      // a process killed a moment ago: its exit settles who was in it before anything starts again
      if (this.proc && this.killed.has(this.proc)) await this.proc.exited;
      for (const { service } of services) {
        if (!isComponent(service)) throw new Error(`${service} is not a component of the all-in-one process`);
        if (this.proc && this.members.has(service))
          throw new Error(
            `all-in-one mode: ${service} already runs in the all-in-one process (a second replica of one component is fleet-only)`,
          );
      }
      const envs = new Map([...this.members].map(([s, m]) => [s, m.env]));
      for (const { service, env } of services) envs.set(service, env);
      mergeEnv(envs); // refused before anything stops
      await this.identity(envs.keys());
      for (const { service, env } of services)
        this.members.set(service, { env, end: this.members.get(service)?.end });
      await this.relaunch(readyTimeoutMs);
      return services.map(({ service }) => this.handle(service));
    });
  }

  /** Takes `service` out of the process: restarted without it, or stopped when it was the last. */
  private leave(service: string): Promise<Exit> {
    return this.serial(async () => {
      const m = this.members.get(service);
      const last = this.proc;
      if (!m) return last ? await last.exited : { code: null, signal: null };
      this.members.delete(service);
      if (!last) {
        m.end?.({ code: null, signal: null });
        return { code: null, signal: null };
      }
      if (this.members.size === 0) {
        const exit = await last.stop();
        this.proc = undefined;
        m.end?.(exit);
        return exit;
      }
      const exit = await this.relaunch(60_000);
      m.end?.(exit);
      return exit;
    });
  }

  /** SIGTERM to the process and every component out; the members' handles end. */
  dispose(): Promise<void> {
    return this.serial(async () => {
      const last = this.proc;
      if (last) await last.stop();
      this.members.clear();
      this.proc = undefined;
      for (const chart of this.bound)
        await this.opts.admin
          .delete(kinds.ClusterRoleBinding!, undefined, bindingName(chart, this.opts.namespace))
          .catch(() => {});
    });
  }

  /** Stops the running process (its exit returned) and starts one with the members, if any. */
  private async relaunch(readyTimeoutMs: number): Promise<Exit> {
    let exit: Exit = { code: null, signal: null };
    const old = this.proc;
    if (old && !this.killed.has(old)) {
      this.replacing = old;
      exit = await old.stop();
    }
    this.proc = undefined;
    if (this.members.size === 0) return exit;
    const { kubeconfig } = await this.identity();
    const env = mergeEnv(new Map([...this.members].map(([s, m]) => [s, m.env])));
    const proc = await startService("all-in-one", {
      kubeconfig,
      logFile: this.opts.logFile,
      env: { ...this.opts.baseEnv, ...env, QUARRY_COMPONENTS: componentsOf(this.members.keys()) },
      readyTimeoutMs,
    });
    this.proc = proc;
    const inIt = [...this.members.keys()];
    void proc.exited.then((r) => {
      if (this.replacing === proc) return;
      // died (killed, or on its own): every component in it ends; they stay members, and the
      // next start brings them all back
      for (const s of inIt) {
        const m = this.members.get(s);
        m?.end?.(r);
        if (m) m.end = undefined;
      }
      if (this.proc === proc) this.proc = undefined;
    });
    return exit;
  }

  /** A member's handle: the one process, seen as that service. */
  private handle(service: string): RunningService {
    const m = this.members.get(service);
    if (!m) throw new Error(`${service} is not in the all-in-one process`);
    const exited = new Promise<Exit>((resolve) => {
      m.end = resolve;
    });
    const current = () => {
      const p = this.proc;
      if (!p) throw new Error(`all-in-one mode: the process hosting ${service} is not running`);
      return p;
    };
    const host = this;
    const { logFile } = this.opts;
    return {
      name: service,
      get pid() {
        return host.proc?.pid ?? -1;
      },
      get opsPort() {
        return current().opsPort;
      },
      logFile,
      exited,
      kill: (signal = "SIGKILL") => {
        const p = this.proc;
        if (!p) return;
        this.killed.add(p);
        p.kill(signal);
      },
      stop: () => this.leave(service),
      logs: () => readFileSync(logFile, "utf8"),
      ops: (path) => current().ops(path),
    };
  }

  private serial<T>(op: () => Promise<T>): Promise<T> {
    const next = this.queue.then(op, op);
    this.queue = next.catch(() => {});
    return next;
  }
}

/** The binding of `chart`'s rules to quarry-all-in-one: named apart from the chart's own ServiceAccount's. */
const bindingName = (chart: string, namespace: string) => `quarry-all-in-one-${chart}-${namespace}`;

/** ClusterRole and Role quarry-<chart> (the chart's rules), bound to quarry-all-in-one in `namespace`. */
async function bindRules(admin: KubeClient, chart: string, namespace: string): Promise<void> {
  const rbac = loadServiceRbac(chart);
  const role = `quarry-${chart === ALL_IN_ONE_CHART ? "all-in-one" : chart}`;
  const subjects = [{ kind: "ServiceAccount", name: ALL_IN_ONE_SA, namespace }];
  await applyObject(admin, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: role },
    rules: rbac.clusterRules ?? [],
  });
  await applyObject(admin, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: bindingName(chart, namespace), labels: { "quarry.dev/test-namespace": namespace } },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
    subjects,
  });
  await applyObject(admin, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: role, namespace },
    rules: rbac.namespaceRules ?? [],
  });
  await applyObject(admin, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: `quarry-all-in-one-${chart}`, namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: role },
    subjects,
  });
}

/** Path of the process's log in the scenario's logs directory. */
export const allInOneLogFile = (logsDir: string, namespace: string) =>
  join(logsDir, `${namespace}-all-in-one.log`);
