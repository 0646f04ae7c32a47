// The API client the runtime, the CLI and tests share, as an interface
// (KubeClient) so tests can run controllers against FakeKubeClient, and its
// HTTP implementation: a small generic REST client over a Connection
// (kubeconfig.ts; @kubernetes/client-node's KubeConfig for what that file does
// not read) and node:http(s) (http-transport.ts: why not undici's fetch). This
// file adds what controllers need and the generated clients make awkward: any
// resource and subresource by path, JSON merge patch, and watches as async
// generators with an AbortSignal.
import type { KubeConfig } from "@kubernetes/client-node";
import type { ObjectMeta } from "@quarry/api";
import type { Dispatcher } from "undici";
import { deadline } from "./deadline.ts";
import { ApiError } from "./errors.ts";
import { type HttpResponse, sendHttp } from "./http-transport.ts";
import { type Authentication, type Connection, loadConnection } from "./kubeconfig.ts";
import { libraryConnection, libraryKubeConfig } from "./library-connection.ts";
import { type ResourceType, resourcePath } from "./resources.ts";

/** The part of any Kubernetes object the runtime relies on (no index signature, so typed API objects fit). */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

export interface ObjectList<T> {
  items: T[];
  metadata: { resourceVersion?: string; continue?: string };
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
}

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
}

export interface WatchOptions extends ListOptions {
  resourceVersion?: string;
  timeoutSeconds?: number;
  allowWatchBookmarks?: boolean;
}

export interface RequestOptions {
  body?: unknown;
  contentType?: string;
  query?: Record<string, string | number | boolean | undefined>;
  signal?: AbortSignal;
  /** Per-request deadline; watches have none (the informer's watchdog guards them). */
  timeoutMs?: number;
}

/** A hung apiserver must not hold a worker forever: every call but a watch has a deadline. */
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

interface Auth extends Authentication {
  at: number;
}

/** How long authentication material is reused before re-reading (rotated tokens). */
const AUTH_TTL_MS = 60_000;

/** What controllers and tools need from the apiserver; every write is one API call. */
export interface KubeClient {
  /** Any path (discovery, raw lists); the response body parsed as JSON (undefined when empty). */
  request<T>(method: string, path: string, opts?: RequestOptions): Promise<T>;
  get<T extends KubeObject>(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    signal?: AbortSignal,
  ): Promise<T>;
  list<T extends KubeObject>(
    rt: ResourceType,
    namespace: string | undefined,
    opts?: ListOptions,
    signal?: AbortSignal,
  ): Promise<ObjectList<T>>;
  /** POST to the collection, or to a subresource of `subresourceOf.name` (e.g. serviceaccounts/token). */
  create<T extends KubeObject>(
    rt: ResourceType,
    obj: T,
    subresourceOf?: { name: string; subresource: string },
  ): Promise<T>;
  /** RFC 7386 merge patch (never strategic merge: custom resources do not support it). */
  mergePatch<T extends KubeObject>(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    patch: unknown,
    subresource?: string,
  ): Promise<T>;
  replace<T extends KubeObject>(rt: ResourceType, obj: T, subresource?: string): Promise<T>;
  delete(rt: ResourceType, namespace: string | undefined, name: string, body?: unknown): Promise<void>;
  /**
   * One watch request. It ends when the server closes the stream or the
   * signal aborts; errors (including HTTP 410) are thrown. `skipLine` sees each raw event line
   * first: a line it returns true for is never parsed (a client that has no raw lines ignores it;
   * the informer checks the parsed event again).
   */
  watch<T>(
    rt: ResourceType,
    namespace: string | undefined,
    opts: WatchOptions,
    signal: AbortSignal,
    skipLine?: (line: string) => boolean,
  ): AsyncGenerator<WatchEvent<T>>;
}

/** KubeClient over HTTP, authenticated by a Connection. */
export class RestKubeClient implements KubeClient {
  readonly server: string;
  /** the kubeconfig context's namespace, or the service account's in a cluster */
  readonly namespace: string | undefined;
  /** where the connection was read from (a file and context, or the service account), for logs */
  readonly source: string;
  /**
   * Whether @kubernetes/client-node read the connection (exec plugins, auth providers, proxy-url,
   * several files): what talks to the apiserver outside this client (the pipe resolver's exec
   * WebSocket) leaves those to the library too.
   */
  readonly readByLibrary: boolean;
  private readonly connection: Connection;
  private readonly kubeconfigPath: string | undefined;
  private auth: Promise<Auth> | undefined;
  private library: Promise<KubeConfig> | undefined;

  constructor(connection: Connection, kubeconfigPath?: string) {
    this.connection = connection;
    this.kubeconfigPath = kubeconfigPath;
    this.server = connection.server.replace(/\/$/, "");
    this.namespace = connection.namespace;
    this.source = connection.source;
    this.readByLibrary = connection.readByLibrary === true;
  }

  /**
   * `kubeconfigPath`, else KUBECONFIG, else ~/.kube/config, else the in-cluster service account;
   * `context` names a kubeconfig context other than the current one (kubectl's --context).
   */
  static fromEnvironment(kubeconfigPath?: string, context?: string): RestKubeClient {
    const own = loadConnection(kubeconfigPath, process.env, undefined, context);
    return new RestKubeClient(
      own ?? { ...libraryConnection(kubeconfigPath, context), readByLibrary: true },
      kubeconfigPath,
    );
  }

  /**
   * @kubernetes/client-node's KubeConfig read from the same place, for what needs the library
   * itself (the pipe resolver's exec when `readByLibrary`); imported on the first call, not before.
   */
  libraryKubeConfig(): Promise<KubeConfig> {
    this.library ??= import("@kubernetes/client-node").then((lib) =>
      libraryKubeConfig(lib, this.kubeconfigPath),
    );
    return this.library;
  }

  /**
   * The headers and dispatcher (TLS material) every request of this client carries, re-read after
   * a while (rotated tokens); for a connection made outside this client, such as a WebSocket.
   */
  async authenticate(): Promise<Authentication> {
    return this.authentication();
  }

  private async authentication(): Promise<Auth> {
    const cached = this.auth ? await this.auth : undefined;
    if (cached && Date.now() - cached.at < AUTH_TTL_MS) return cached;
    const pending = this.connection.authenticate().then((a) => ({ ...a, at: Date.now() }));
    this.auth = pending;
    pending.catch(() => {
      if (this.auth === pending) this.auth = undefined;
    });
    return pending;
  }

  private async send(method: string, path: string, opts: RequestOptions = {}) {
    const { headers: authHeaders, agent, dispatcher } = await this.authentication();
    const url = new URL(this.server + path);
    for (const [k, v] of Object.entries(opts.query ?? {})) {
      if (v !== undefined) url.searchParams.set(k, String(v));
    }
    const headers: Record<string, string> = { ...authHeaders, Accept: "application/json" };
    let body: string | undefined;
    if (opts.body !== undefined) {
      headers["Content-Type"] = opts.contentType ?? "application/json";
      body = JSON.stringify(opts.body);
    }
    const signal = opts.signal;
    const res = dispatcher
      ? await viaDispatcher(url, { method, headers, body, dispatcher, signal })
      : await sendHttp(url, { method, headers, body, agent, signal });
    if (!res.ok) {
      const text = await res.text();
      let reason: string | undefined;
      let message = `${method} ${path}: HTTP ${res.status}`;
      try {
        const status = JSON.parse(text) as { reason?: string; message?: string };
        reason = status.reason;
        if (status.message) message = `${message}: ${status.message}`;
      } catch {
        if (text) message = `${message}: ${text.slice(0, 200)}`;
      }
      throw new ApiError(res.status, reason, message);
    }
    return res;
  }

  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const { timeoutMs } = { timeoutMs: DEFAULT_REQUEST_TIMEOUT_MS, ...opts };
    // the deadline covers reading the body too; released as soon as the call is over
    const until = timeoutMs === undefined ? undefined : deadline(timeoutMs, opts.signal);
    try {
      const res = await this.send(method, path, { ...opts, signal: until?.signal ?? opts.signal });
      const text = await res.text();
      return (text ? JSON.parse(text) : undefined) as T;
    } finally {
      until?.release();
    }
  }

  get<T extends KubeObject>(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    signal?: AbortSignal,
  ) {
    return this.request<T>("GET", resourcePath(rt, namespace, name), { signal });
  }

  list<T extends KubeObject>(
    rt: ResourceType,
    namespace: string | undefined,
    opts: ListOptions = {},
    signal?: AbortSignal,
  ) {
    return this.request<ObjectList<T>>("GET", resourcePath(rt, namespace), { query: { ...opts }, signal });
  }

  create<T extends KubeObject>(
    rt: ResourceType,
    obj: T,
    subresourceOf?: { name: string; subresource: string },
  ) {
    const ns = obj.metadata.namespace;
    const path = subresourceOf
      ? resourcePath(rt, ns, subresourceOf.name, subresourceOf.subresource)
      : resourcePath(rt, ns);
    return this.request<T>("POST", path, { body: obj });
  }

  mergePatch<T extends KubeObject>(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    patch: unknown,
    subresource?: string,
  ) {
    return this.request<T>("PATCH", resourcePath(rt, namespace, name, subresource), {
      body: patch,
      contentType: "application/merge-patch+json",
    });
  }

  replace<T extends KubeObject>(rt: ResourceType, obj: T, subresource?: string) {
    return this.request<T>("PUT", resourcePath(rt, obj.metadata.namespace, obj.metadata.name, subresource), {
      body: obj,
    });
  }

  async delete(rt: ResourceType, namespace: string | undefined, name: string, body?: unknown): Promise<void> {
    await this.request("DELETE", resourcePath(rt, namespace, name), { body });
  }

  /** Restarting, relisting and stall detection are the informer's job, not this stream's. */
  async *watch<T>(
    rt: ResourceType,
    namespace: string | undefined,
    opts: WatchOptions,
    signal: AbortSignal,
    skipLine?: (line: string) => boolean,
  ): AsyncGenerator<WatchEvent<T>> {
    const res = await this.send("GET", resourcePath(rt, namespace), {
      query: { ...opts, watch: true },
      signal,
    });
    const decoder = new TextDecoder();
    let buffered = "";
    for await (const chunk of res.body) {
      buffered += decoder.decode(chunk, { stream: true });
      let nl = buffered.indexOf("\n");
      while (nl >= 0) {
        const line = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        if (line && !skipLine?.(line)) yield JSON.parse(line) as WatchEvent<T>;
        nl = buffered.indexOf("\n");
      }
    }
  }
}

/**
 * A kubeconfig's proxy-url: undici's fetch through @kubernetes/client-node's dispatcher (its proxy
 * agents), imported only then.
 */
async function viaDispatcher(
  url: URL,
  init: { method: string; headers: Record<string, string>; body?: string | undefined } & {
    dispatcher: Dispatcher;
    signal?: AbortSignal | undefined;
  },
): Promise<HttpResponse> {
  const { fetch } = await import("undici");
  const res = await fetch(url, init);
  const body = res.body;
  async function* chunks(): AsyncGenerator<Buffer> {
    if (body) for await (const chunk of body) yield Buffer.from(chunk as Uint8Array);
  }
  return { status: res.status, ok: res.ok, text: () => res.text(), body: chunks() };
}
