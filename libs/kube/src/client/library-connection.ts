// The connection @kubernetes/client-node reads, for the kubeconfigs
// kubeconfig.ts leaves to it (exec plugins, auth providers, proxy-url, several
// files in KUBECONFIG). Loaded synchronously (require of an ES module) and only
// here, so processes that never need it never pay its ~85 MiB import.
//
// The library stays the authority on credentials (it runs the exec plugin or
// auth provider and caches what they return), but not on the transport: its
// undici Agent offers HTTP/2 by ALPN, and over HTTP/2 every call of a process
// shares one connection, so one frozen connection holds every watch (the chaos
// suite's finding, docs/testing.md). The TLS material it computes is given to
// an HTTP/1.1 node:https Agent of ours instead, the same as kubeconfig.ts
// builds (http-transport.ts). Only a proxy-url keeps the library's own
// dispatcher (its proxy and SOCKS agents), and with it undici's fetch.
import { createHash } from "node:crypto";
import type { Agent } from "node:http";
import type { RequestOptions } from "node:https";
import { createRequire } from "node:module";
import type { KubeConfig } from "@kubernetes/client-node";
import type { Dispatcher } from "undici";
import { apiserverAgent, type TlsMaterial } from "./http-transport.ts";
import type { Authentication, Connection } from "./kubeconfig.ts";

type ClientNode = typeof import("@kubernetes/client-node");

export function libraryKubeConfig(lib: ClientNode, kubeconfigPath: string | undefined): KubeConfig {
  const kc = new lib.KubeConfig();
  if (kubeconfigPath) kc.loadFromFile(kubeconfigPath);
  else kc.loadFromDefault();
  return kc;
}

export function libraryConnection(kubeconfigPath?: string, context?: string): Connection {
  const lib = createRequire(import.meta.url)("@kubernetes/client-node") as ClientNode;
  const kc = libraryKubeConfig(lib, kubeconfigPath);
  if (context) kc.setCurrentContext(context);
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error("kubeconfig has no current cluster");
  const agents = new TlsAgents(cluster.server);
  return {
    server: cluster.server,
    namespace: kc.getContextObject(kc.getCurrentContext())?.namespace,
    source: `@kubernetes/client-node (context ${kc.getCurrentContext()})`,
    readByLibrary: true,
    authenticate: async (): Promise<Authentication> => {
      if (cluster.proxyUrl) {
        const ctx = new lib.RequestContext(cluster.server, lib.HttpMethod.GET);
        await kc.applySecurityAuthentication(ctx);
        const dispatcher = ctx.getDispatcher() as Dispatcher | undefined;
        return { headers: { ...ctx.getHeaders() }, ...agents.for({}), ...(dispatcher ? { dispatcher } : {}) };
      }
      // runs the exec plugin or auth provider (the library caches their credentials until they expire)
      const opts: RequestOptions = {};
      await kc.applyToHTTPSOptions(opts);
      return { headers: headersOf(opts), ...agents.for(opts) };
    },
  };
}

/** The request headers the library put in `opts` (an Authorization from a plugin, a user's headers). */
export function headersOf(opts: RequestOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.headers ?? {})) {
    if (v === undefined) continue;
    headers[k] = Array.isArray(v) ? v.join(", ") : String(v);
  }
  // the library puts a kubeconfig's username and password in `auth` (for node:https)
  if (opts.auth && !Object.keys(headers).some((k) => k.toLowerCase() === "authorization"))
    headers.Authorization = `Basic ${Buffer.from(opts.auth).toString("base64")}`;
  return headers;
}

/**
 * One HTTP/1.1 Agent per distinct TLS material: a plugin that rotates its client certificate gets
 * a new Agent; the same material keeps its Agent and its connections across the periodic
 * re-authentication.
 */
export class TlsAgents {
  private readonly server: string;
  private current: { key: string; agent: Agent; tls: TlsMaterial } | undefined;

  constructor(server: string) {
    this.server = server;
  }

  for(opts: RequestOptions): { agent: Agent; tls: TlsMaterial } {
    const tls: TlsMaterial = {
      ca: opts.ca,
      cert: opts.cert,
      key: opts.key,
      pfx: opts.pfx,
      passphrase: opts.passphrase,
      rejectUnauthorized: opts.rejectUnauthorized,
      servername: opts.servername,
    };
    const key = createHash("sha256").update(JSON.stringify(tls, bytesAsBase64)).digest("hex");
    if (this.current?.key !== key) {
      const previous = this.current?.agent;
      this.current = { key, agent: apiserverAgent(this.server, tls), tls };
      // node's Agent has no graceful close: calls under way (watches) keep the old material for a
      // minute, then their sockets go and they reconnect with the new one
      if (previous) setTimeout(() => previous.destroy(), 60_000).unref();
    }
    return { agent: this.current.agent, tls: this.current.tls };
  }
}

function bytesAsBase64(_key: string, value: unknown): unknown {
  if (value && typeof value === "object" && (value as { type?: unknown }).type === "Buffer")
    return Buffer.from((value as { data: number[] }).data).toString("base64");
  return value;
}
