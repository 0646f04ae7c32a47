// Where the apiserver is and how to authenticate to it, read without
// @kubernetes/client-node for the cases every service and test meets: the
// in-cluster service account, and a kubeconfig whose user has a token, a token
// file, a client certificate or a username and password. Importing the library
// costs ~85 MiB of RSS per process (its generated API models load with its
// KubeConfig), more than the rest of a service at rest; so it is loaded only
// for what this file does not read (exec plugins, auth providers, proxy-url,
// several files in KUBECONFIG), where it stays the authority.
import { existsSync, readFileSync } from "node:fs";
import type { Agent } from "node:http";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import yaml from "js-yaml";
import type { Dispatcher } from "undici";
import { apiserverAgent, type TlsMaterial } from "./http-transport.ts";

/** Headers and TLS for one request; re-read after a while (rotated tokens). */
export interface Authentication {
  headers: Record<string, string>;
  /** node:http(s) Agent with the connection's TLS material: HTTP/1.1, keep-alive (http-transport.ts) */
  agent: Agent;
  /** the same TLS material, for a connection made outside the client (the pipe resolver's WebSocket) */
  tls: TlsMaterial;
  /**
   * Set only when the calls must go through @kubernetes/client-node's own undici dispatcher (a
   * kubeconfig's proxy-url: its HTTP and SOCKS proxy agents); the client then uses undici's fetch.
   */
  dispatcher?: Dispatcher;
}

export interface Connection {
  server: string;
  /** the current context's namespace (kubeconfig) or the service account's (in cluster) */
  namespace: string | undefined;
  /** what the connection was read from, for logs */
  source: string;
  /** set when @kubernetes/client-node read it (what this file leaves to the library) */
  readByLibrary?: true;
  authenticate(): Promise<Authentication>;
}

const SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/**
 * What this file can read, in client-node's `loadFromDefault` order: `path`, else KUBECONFIG,
 * else ~/.kube/config, else the in-cluster service account. `undefined` means "ask the library":
 * the config needs something only it does, or there is none at all.
 */
export function loadConnection(
  path?: string,
  env: NodeJS.ProcessEnv = process.env,
  saDir = SA_DIR,
  context?: string,
): Connection | undefined {
  const file = path ?? defaultKubeconfigFile(env);
  if (file === null) return undefined;
  if (file !== undefined) return fromKubeconfig(file, context);
  if (context) throw new Error(`context "${context}" needs a kubeconfig: none was found`);
  return inCluster(env, saDir);
}

/** The kubeconfig file to read; undefined when there is none; null when KUBECONFIG lists several. */
function defaultKubeconfigFile(env: NodeJS.ProcessEnv): string | undefined | null {
  const listed = (env.KUBECONFIG ?? "").split(":").filter(Boolean);
  if (listed.length > 1) return null;
  if (listed[0]) return listed[0];
  const home = join(env.HOME ?? homedir(), ".kube", "config");
  return existsSync(home) ? home : undefined;
}

function inCluster(env: NodeJS.ProcessEnv, saDir: string): Connection | undefined {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  const tokenFile = join(saDir, "token");
  if (!host || !port || !existsSync(tokenFile)) return undefined;
  const server = `https://${host.includes(":") ? `[${host}]` : host}:${port}`;
  const ca = readFileSync(join(saDir, "ca.crt"));
  const nsFile = join(saDir, "namespace");
  return {
    server,
    namespace: existsSync(nsFile) ? readFileSync(nsFile, "utf8").trim() : undefined,
    source: "in-cluster service account",
    authenticate: tokenAuth(() => readFileSync(tokenFile, "utf8").trim(), { ca }, server),
  };
}

interface Named<T> {
  name: string;
  [key: string]: T | string;
}

interface KubeconfigCluster {
  server?: string;
  "certificate-authority"?: string;
  "certificate-authority-data"?: string;
  "insecure-skip-tls-verify"?: boolean;
  "tls-server-name"?: string;
  "proxy-url"?: string;
}

interface KubeconfigUser {
  token?: string;
  tokenFile?: string;
  "client-certificate"?: string;
  "client-certificate-data"?: string;
  "client-key"?: string;
  "client-key-data"?: string;
  username?: string;
  password?: string;
  exec?: unknown;
  "auth-provider"?: unknown;
}

interface Kubeconfig {
  "current-context"?: string;
  contexts?: Named<{ cluster?: string; user?: string; namespace?: string }>[];
  clusters?: Named<KubeconfigCluster>[];
  users?: Named<KubeconfigUser>[];
}

function entry<T>(list: Named<T>[] | undefined, name: string | undefined, key: string): T | undefined {
  const found = list?.find((e) => e.name === name)?.[key];
  return typeof found === "object" && found !== null ? found : undefined;
}

/** `contextName` picks a context other than the current one (kubectl's --context). */
function fromKubeconfig(file: string, contextName?: string): Connection | undefined {
  const config = (yaml.load(readFileSync(file, "utf8")) ?? {}) as Kubeconfig;
  contextName ??= config["current-context"];
  const context = entry(config.contexts, contextName, "context");
  if (contextName && !context) throw new Error(`context "${contextName}" not found in ${file}`);
  const cluster = entry(config.clusters, context?.cluster, "cluster");
  const user = entry(config.users, context?.user, "user") ?? {};
  if (!cluster?.server || cluster["proxy-url"] || user.exec || user["auth-provider"]) return undefined;
  const base = dirname(resolve(file));
  const material = (data: string | undefined, path: string | undefined): Buffer | undefined => {
    if (data) return Buffer.from(data, "base64");
    if (path) return readFileSync(isAbsolute(path) ? path : join(base, path));
    return undefined;
  };
  const tls: TlsMaterial = {
    ca: material(cluster["certificate-authority-data"], cluster["certificate-authority"]),
    cert: material(user["client-certificate-data"], user["client-certificate"]),
    key: material(user["client-key-data"], user["client-key"]),
    rejectUnauthorized: cluster["insecure-skip-tls-verify"] !== true,
    servername: cluster["tls-server-name"],
  };
  const tokenFile =
    user.tokenFile && (isAbsolute(user.tokenFile) ? user.tokenFile : join(base, user.tokenFile));
  const token = user.token
    ? () => user.token as string
    : tokenFile
      ? () => readFileSync(tokenFile, "utf8").trim()
      : undefined;
  const basic =
    user.username !== undefined && user.password !== undefined
      ? `Basic ${Buffer.from(`${user.username}:${user.password}`).toString("base64")}`
      : undefined;
  return {
    server: cluster.server,
    namespace: context?.namespace,
    source: `${file} (context ${contextName ?? "none"})`,
    authenticate: token
      ? tokenAuth(token, tls, cluster.server)
      : fixedAuth(basic ? { Authorization: basic } : {}, tls, cluster.server),
  };
}

/** One Agent (one connection pool) for the connection's life; the headers re-read each time. */
function tokenAuth(token: () => string, tls: TlsMaterial, server: string): () => Promise<Authentication> {
  const agent = apiserverAgent(server, tls);
  return async () => ({ headers: { Authorization: `Bearer ${token()}` }, agent, tls });
}

function fixedAuth(headers: Record<string, string>, tls: TlsMaterial, server: string) {
  const agent = apiserverAgent(server, tls);
  return async (): Promise<Authentication> => ({ headers, agent, tls });
}
