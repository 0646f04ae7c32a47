// An in-memory KubeClient for unit tests. Controllers run against it
// unchanged, and a test can say "given these objects, exactly these writes"
// (knative's table tests: WantPatches, WantStatusUpdates). It keeps the
// apiserver behaviour controllers depend on: a resourceVersion that moves on
// every change (a stale one is a 409), AlreadyExists, NotFound, generation,
// the status subresource of a CRD, generateName, label selectors, finalizers
// and watches. Raw `request` calls are answered only by reactors.
import { isDeepStrictEqual } from "node:util";
import type { ObjectMeta } from "@quarry/api";
import type {
  KubeClient,
  KubeObject,
  ListOptions,
  ObjectList,
  RequestOptions,
  WatchEvent,
  WatchOptions,
} from "../client/client.ts";
import { ApiError, isApiError } from "../client/errors.ts";
import { applyMergePatch, isPlainObject } from "../client/merge-patch.ts";
import type { ResourceType } from "../client/resources.ts";
import { fieldMatcher, labelMatcher } from "../client/selectors.ts";

export type FakeVerb = "get" | "list" | "watch" | "create" | "patch" | "update" | "delete" | "request";
export type FakeWriteVerb = "create" | "patch" | "update" | "delete";

/** One call as reactors see it. Strings are "" where Kubernetes has none (cluster scope, no subresource). */
export interface FakeCall {
  verb: FakeVerb;
  /** Resource plural; for `request`, the path. */
  resource: string;
  namespace: string;
  /** The object's name; for `request`, the HTTP method. */
  name: string;
  subresource: string;
  /** Patch, created or replaced object, DeleteOptions, or a raw request's body. */
  body: unknown;
}

/** A write as the apiserver received it; `error` (HTTP status, 0 for a non-HTTP failure) when it failed. */
export interface FakeAction {
  verb: FakeWriteVerb;
  resource: string;
  namespace: string;
  name: string;
  subresource: string;
  body: unknown;
  error?: number;
}

/**
 * Sees every call before the fake does. Return undefined to let it through,
 * return a value to answer the call with it (nothing is stored), or throw to
 * fail it (an ApiError for an HTTP error).
 */
export type FakeReactor = (call: FakeCall) => unknown;

interface Obj {
  metadata: ObjectMeta;
  [field: string]: unknown;
}

interface Change {
  rv: number;
  resource: string;
  type: "ADDED" | "MODIFIED" | "DELETED";
  object: Obj;
  old: Obj | undefined;
}

const REASONS: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  409: "Conflict",
  410: "Expired",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

/** Kubernetes' generateName alphabet (no vowels, no look-alikes). */
const NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789";

export interface FakeKubeClientOptions {
  /** Clock for creationTimestamp and deletionTimestamp (one-second resolution, as the apiserver). */
  now?: () => number;
}

export class FakeKubeClient implements KubeClient {
  /** Every write attempted, in order, including the ones that failed. */
  readonly actions: FakeAction[] = [];
  /** Every call, reads included. */
  readonly calls: FakeCall[] = [];
  private readonly store = new Map<string, Obj>();
  private readonly history: Change[] = [];
  private readonly listeners = new Set<(change: Change | undefined) => void>();
  private reactors: FakeReactor[] = [];
  private rv = 0;
  private uids = 0;
  private names = 0;
  private readonly now: () => number;

  constructor(opts: FakeKubeClientOptions = {}) {
    this.now = opts.now ?? Date.now;
  }

  // ---- test controls ----

  /**
   * Stores objects as another client would have written them: status
   * included, no action recorded, watchers notified. Missing uid,
   * creationTimestamp and generation are filled in; resourceVersion is always
   * the fake's. Returns the stored objects.
   */
  seed<T extends KubeObject>(rt: ResourceType, ...objs: T[]): T[] {
    return objs.map((given) => {
      const obj = clone(given) as unknown as Obj;
      const { namespace, name } = this.identity(rt, obj.metadata.namespace, obj.metadata.name);
      const key = this.key(rt, namespace, name);
      const old = this.store.get(key);
      if (old) return this.commit(rt, key, old, obj, "all");
      obj.metadata = this.fresh(obj.metadata, name, namespace);
      obj.metadata.generation = given.metadata.generation ?? 1;
      return this.insert(rt, key, obj);
    }) as unknown as T[];
  }

  /** The stored object (a copy), or undefined. */
  object<T extends KubeObject>(rt: ResourceType, namespace: string | undefined, name: string): T | undefined {
    const obj = this.store.get(this.key(rt, rt.namespaced ? (namespace ?? "") : "", name));
    return obj && (clone(obj) as unknown as T);
  }

  /** Adds a reactor; returns a function removing it. Reactors run in the order added. */
  react(reactor: FakeReactor): () => void {
    this.reactors.push(reactor);
    return () => {
      this.reactors = this.reactors.filter((r) => r !== reactor);
    };
  }

  /** Fails the next call of `verb` (matching `match`, if given) with an ApiError of `status`, once. */
  failNext(
    verb: FakeVerb,
    status: number,
    match: { resource?: string; name?: string; subresource?: string; message?: string } = {},
  ): void {
    const remove = this.react((call) => {
      if (call.verb !== verb) return undefined;
      if (match.resource !== undefined && call.resource !== match.resource) return undefined;
      if (match.name !== undefined && call.name !== match.name) return undefined;
      if (match.subresource !== undefined && call.subresource !== match.subresource) return undefined;
      remove();
      const reason = REASONS[status];
      throw new ApiError(status, reason, match.message ?? `injected ${status} ${reason ?? ""}`.trim());
    });
  }

  /** The writes of `verb` (all writes when omitted). */
  writes(verb?: FakeWriteVerb): FakeAction[] {
    return this.actions.filter((a) => verb === undefined || a.verb === verb);
  }

  clearActions(): void {
    this.actions.length = 0;
    this.calls.length = 0;
  }

  /** Ends every open watch normally, as an apiserver's watch timeout does. */
  closeWatches(): void {
    for (const l of this.listeners) l(undefined);
  }

  // ---- KubeClient ----

  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const answer = this.intercept({
      verb: "request",
      resource: path,
      namespace: "",
      name: method,
      subresource: "",
      body: opts.body,
    });
    if (answer !== undefined) return clone(answer) as T;
    throw new Error(`FakeKubeClient: no reactor answers ${method} ${path}`);
  }

  async get<T extends KubeObject>(rt: ResourceType, namespace: string | undefined, name: string): Promise<T> {
    const { namespace: ns } = this.identity(rt, namespace, name);
    const answer = this.intercept(this.callOf("get", rt, ns, name, "", undefined));
    if (answer !== undefined) return clone(answer) as T;
    return clone(this.existing(rt, ns, name)) as unknown as T;
  }

  async list<T extends KubeObject>(
    rt: ResourceType,
    namespace: string | undefined,
    opts: ListOptions = {},
  ): Promise<ObjectList<T>> {
    const ns = rt.namespaced ? (namespace ?? "") : "";
    const answer = this.intercept(this.callOf("list", rt, ns, "", "", opts));
    if (answer !== undefined) return clone(answer) as ObjectList<T>;
    const matches = this.matcher(ns, opts);
    const prefix = `${this.resourceId(rt)}|`;
    const all = [...this.store.entries()]
      .filter(([key, obj]) => key.startsWith(prefix) && matches(obj))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, obj]) => clone(obj));
    // paging: `continue` is the offset of the next page
    const from = opts.continue ? Number(opts.continue) : 0;
    const to = opts.limit ? from + opts.limit : all.length;
    const metadata: ObjectList<T>["metadata"] = { resourceVersion: String(this.rv) };
    if (to < all.length) metadata.continue = String(to);
    return { items: all.slice(from, to) as unknown as T[], metadata };
  }

  async create<T extends KubeObject>(
    rt: ResourceType,
    given: T,
    subresourceOf?: { name: string; subresource: string },
  ): Promise<T> {
    const obj = clone(given) as unknown as Obj;
    const { namespace } = this.identity(rt, obj.metadata.namespace, subresourceOf?.name ?? obj.metadata.name);
    if (subresourceOf) {
      // e.g. serviceaccounts/token: the parent must exist; the answer is the request echoed
      return this.write(
        this.callOf("create", rt, namespace, subresourceOf.name, subresourceOf.subresource, obj),
        () => {
          this.existing(rt, namespace, subresourceOf.name);
          return clone(obj) as unknown as T;
        },
      );
    }
    let name = obj.metadata.name ?? "";
    if (!name && obj.metadata.generateName) name = obj.metadata.generateName + this.nameSuffix();
    return this.write(this.callOf("create", rt, namespace, name, "", clone(given)), () => {
      if (!name)
        throw new ApiError(422, "Invalid", "metadata.name: Required value: name or generateName is required");
      const key = this.key(rt, namespace, name);
      if (this.store.has(key))
        throw new ApiError(409, "AlreadyExists", `${qualified(rt)} "${name}" already exists`);
      obj.metadata = this.fresh(obj.metadata, name, namespace);
      obj.metadata.generation = 1;
      delete obj.metadata.deletionTimestamp;
      delete obj.status; // a CRD with a status subresource drops status on create
      return this.insert(rt, key, obj) as unknown as T;
    });
  }

  async mergePatch<T extends KubeObject>(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    patch: unknown,
    subresource?: string,
  ): Promise<T> {
    const { namespace: ns } = this.identity(rt, namespace, name);
    return this.write(this.callOf("patch", rt, ns, name, subresource ?? "", clone(patch)), () => {
      if (!isPlainObject(patch)) throw new ApiError(400, "BadRequest", "a merge patch must be a JSON object");
      const old = this.existing(rt, ns, name, subresource);
      const meta = isPlainObject(patch.metadata) ? patch.metadata : {};
      this.checkVersion(rt, old, meta.resourceVersion);
      const next = applyMergePatch(old, patch) as Obj;
      return this.commit(rt, this.key(rt, ns, name), old, next, modeOf(subresource)) as unknown as T;
    });
  }

  async replace<T extends KubeObject>(rt: ResourceType, given: T, subresource?: string): Promise<T> {
    const { namespace, name } = this.identity(rt, given.metadata.namespace, given.metadata.name);
    return this.write(this.callOf("update", rt, namespace, name, subresource ?? "", clone(given)), () => {
      const old = this.existing(rt, namespace, name, subresource);
      this.checkVersion(rt, old, given.metadata.resourceVersion);
      const next = clone(given) as unknown as Obj;
      return this.commit(rt, this.key(rt, namespace, name), old, next, modeOf(subresource)) as unknown as T;
    });
  }

  async delete(rt: ResourceType, namespace: string | undefined, name: string, body?: unknown): Promise<void> {
    const { namespace: ns } = this.identity(rt, namespace, name);
    this.write(this.callOf("delete", rt, ns, name, "", clone(body)), () => {
      const old = this.existing(rt, ns, name);
      const pre = isPlainObject(body) && isPlainObject(body.preconditions) ? body.preconditions : {};
      this.checkVersion(rt, old, pre.resourceVersion);
      if (pre.uid !== undefined && pre.uid !== old.metadata.uid)
        throw new ApiError(409, "Conflict", `${qualified(rt)} "${name}": precondition failed: uid`);
      const key = this.key(rt, ns, name);
      if (old.metadata.finalizers?.length) {
        // finalizers hold the object; it goes once the last one is removed (see commit)
        if (!old.metadata.deletionTimestamp)
          this.commit(
            rt,
            key,
            old,
            { ...old, metadata: { ...old.metadata, deletionTimestamp: this.timestamp() } },
            "all",
          );
        return undefined;
      }
      this.remove(rt, key, old);
      return undefined;
    });
  }

  async *watch<T>(
    rt: ResourceType,
    namespace: string | undefined,
    opts: WatchOptions,
    signal: AbortSignal,
  ): AsyncGenerator<WatchEvent<T>> {
    const ns = rt.namespaced ? (namespace ?? "") : "";
    const answer = this.intercept(this.callOf("watch", rt, ns, "", "", opts));
    if (answer !== undefined)
      throw new Error("FakeKubeClient: a reactor cannot answer a watch; throw instead");
    const matches = this.matcher(ns, opts);
    const resource = this.resourceId(rt);
    const pending: WatchEvent<T>[] = [];
    let wake: (() => void) | undefined;
    let closed = false;
    const push = (change: Change | undefined) => {
      if (!change) closed = true;
      else if (change.resource === resource) {
        const event = toEvent(change, matches);
        if (event) pending.push(event as WatchEvent<T>);
      }
      wake?.();
    };
    // subscribe and replay in one synchronous step, so no change falls in between
    const since = Number(opts.resourceVersion || 0);
    if (since === 0) {
      for (const [key, obj] of this.store) {
        if (key.startsWith(`${resource}|`) && matches(obj))
          pending.push({ type: "ADDED", object: clone(obj) as unknown as T });
      }
    } else {
      for (const change of this.history) if (change.rv > since) push(change);
    }
    this.listeners.add(push);
    const onAbort = () => wake?.();
    signal.addEventListener("abort", onAbort);
    try {
      while (!signal.aborted) {
        const next = pending.shift();
        if (next) {
          yield next;
          continue;
        }
        if (closed) return;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
    } finally {
      this.listeners.delete(push);
      signal.removeEventListener("abort", onAbort);
    }
  }

  // ---- internals ----

  /** Runs reactors; the first non-undefined answer wins. */
  private intercept(call: FakeCall): unknown {
    this.calls.push(call);
    for (const reactor of [...this.reactors]) {
      const answer = reactor(call);
      if (answer !== undefined) return answer;
    }
    return undefined;
  }

  /** Records the write (and its failure, if any) around `apply`. */
  private write<R>(call: FakeCall & { verb: FakeWriteVerb }, apply: () => R): R {
    const action: FakeAction = {
      verb: call.verb,
      resource: call.resource,
      namespace: call.namespace,
      name: call.name,
      subresource: call.subresource,
      body: call.body,
    };
    this.actions.push(action);
    try {
      const answer = this.intercept(call);
      return answer !== undefined ? (clone(answer) as R) : apply();
    } catch (err) {
      action.error = isApiError(err) ? err.status : 0;
      throw err;
    }
  }

  private callOf<V extends FakeVerb>(
    verb: V,
    rt: ResourceType,
    namespace: string,
    name: string,
    subresource: string,
    body: unknown,
  ): FakeCall & { verb: V } {
    return { verb, resource: rt.plural, namespace, name, subresource, body };
  }

  private identity(rt: ResourceType, namespace: string | undefined, name: string | undefined) {
    if (rt.namespaced && !namespace)
      throw new ApiError(400, "BadRequest", `${qualified(rt)} "${name ?? ""}": a namespace is required`);
    return { namespace: rt.namespaced ? (namespace ?? "") : "", name: name ?? "" };
  }

  private resourceId(rt: ResourceType): string {
    return `${rt.plural}.${rt.group}`;
  }

  private key(rt: ResourceType, namespace: string, name: string): string {
    return `${this.resourceId(rt)}|${namespace}|${name}`;
  }

  private existing(rt: ResourceType, namespace: string, name: string, subresource?: string): Obj {
    if (subresource && subresource !== "status")
      throw new ApiError(
        404,
        "NotFound",
        `${qualified(rt)}/${subresource}: the server could not find the requested resource`,
      );
    const obj = this.store.get(this.key(rt, namespace, name));
    if (!obj) throw new ApiError(404, "NotFound", `${qualified(rt)} "${name}" not found`);
    return obj;
  }

  private checkVersion(rt: ResourceType, current: Obj, wanted: unknown): void {
    if (wanted === undefined || wanted === null || wanted === "") return;
    if (wanted !== current.metadata.resourceVersion)
      throw new ApiError(
        409,
        "Conflict",
        `Operation cannot be fulfilled on ${qualified(rt)} "${current.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`,
      );
  }

  /** Namespace ("" = all) and selectors; the resource is the caller's to check. */
  private matcher(namespace: string, opts: ListOptions): (obj: Obj) => boolean {
    const labels = labelMatcher(opts.labelSelector);
    const fields = fieldMatcher(opts.fieldSelector);
    return (obj) =>
      (namespace === "" || obj.metadata.namespace === namespace) &&
      labels(obj.metadata.labels) &&
      fields(obj.metadata);
  }

  private fresh(meta: ObjectMeta, name: string, namespace: string): ObjectMeta {
    const out: ObjectMeta = { ...meta, name };
    if (namespace) out.namespace = namespace;
    else delete out.namespace;
    out.uid = meta.uid ?? `00000000-0000-4000-8000-${String(++this.uids).padStart(12, "0")}`;
    out.creationTimestamp = meta.creationTimestamp ?? this.timestamp();
    return out;
  }

  private insert(rt: ResourceType, key: string, obj: Obj): Obj {
    obj.metadata.resourceVersion = String(++this.rv);
    this.store.set(key, obj);
    this.publish({ rv: this.rv, resource: this.resourceId(rt), type: "ADDED", object: obj, old: undefined });
    return clone(obj);
  }

  private remove(rt: ResourceType, key: string, old: Obj): Obj {
    const gone = clone(old);
    gone.metadata.resourceVersion = String(++this.rv);
    this.store.delete(key);
    this.publish({ rv: this.rv, resource: this.resourceId(rt), type: "DELETED", object: gone, old });
    return clone(gone);
  }

  /**
   * Stores `next` over `old` the way the apiserver does for a CRD with a
   * status subresource: a status write changes only .status, a main write
   * never changes .status ("all" is the fake's own: seeds, deletion). The
   * server owns identity, resourceVersion, deletionTimestamp and generation
   * (bumped when anything but metadata and status changed). A write that
   * changes nothing leaves the resourceVersion alone, as the apiserver does.
   */
  private commit(rt: ResourceType, key: string, old: Obj, next: Obj, mode: "main" | "status" | "all"): Obj {
    const result: Obj =
      mode === "status"
        ? withField(clone(old), "status", next.status)
        : mode === "main"
          ? withField(next, "status", old.status)
          : { ...next };
    const m = old.metadata;
    result.metadata = {
      ...(mode === "status" ? m : result.metadata),
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
      generation: m.generation,
      deletionTimestamp: mode === "all" ? result.metadata.deletionTimestamp : m.deletionTimestamp,
    };
    dropUndefined(result.metadata);
    if (isDeepStrictEqual(result, old)) return clone(old);
    if (!isDeepStrictEqual(specOf(result), specOf(old))) result.metadata.generation = (m.generation ?? 0) + 1;
    if (result.metadata.deletionTimestamp && !result.metadata.finalizers?.length)
      return this.remove(rt, key, result);
    result.metadata.resourceVersion = String(++this.rv);
    this.store.set(key, result);
    this.publish({ rv: this.rv, resource: this.resourceId(rt), type: "MODIFIED", object: result, old });
    return clone(result);
  }

  private publish(change: Change): void {
    this.history.push(change);
    for (const l of this.listeners) l(change);
  }

  private timestamp(): string {
    return new Date(this.now()).toISOString().replace(/\.\d{3}Z$/, "Z");
  }

  private nameSuffix(): string {
    let n = ++this.names;
    let out = "";
    for (let i = 0; i < 5; i++) {
      out = NAME_CHARS[n % NAME_CHARS.length] + out;
      n = Math.floor(n / NAME_CHARS.length);
    }
    return out;
  }
}

/** A label selector seen by a watch: objects moving into it are ADDED, out of it DELETED. */
function toEvent(change: Change, matches: (o: Obj) => boolean): WatchEvent<Obj> | undefined {
  const now = matches(change.object);
  const before = change.old !== undefined && matches(change.old);
  if (change.type === "DELETED")
    return before ? { type: "DELETED", object: clone(change.object) } : undefined;
  if (change.type === "ADDED") return now ? { type: "ADDED", object: clone(change.object) } : undefined;
  if (now) return { type: before ? "MODIFIED" : "ADDED", object: clone(change.object) };
  return before ? { type: "DELETED", object: clone(change.object) } : undefined;
}

/** Everything but metadata and status: what the generation counts. */
function specOf(obj: Obj): Record<string, unknown> {
  const { metadata: _m, status: _s, ...rest } = obj;
  return rest;
}

function modeOf(subresource: string | undefined): "main" | "status" {
  return subresource === "status" ? "status" : "main";
}

function withField(obj: Obj, field: string, value: unknown): Obj {
  const out = { ...obj };
  if (value === undefined) delete out[field];
  else out[field] = value;
  return out;
}

function dropUndefined(meta: ObjectMeta): void {
  for (const k of Object.keys(meta) as (keyof ObjectMeta)[]) if (meta[k] === undefined) delete meta[k];
}

function qualified(rt: ResourceType): string {
  return rt.group ? `${rt.plural}.${rt.group}` : rt.plural;
}

function clone<T>(value: T): T {
  return value === undefined ? value : structuredClone(value);
}
