// What a resolver author writes: a handful of members. Everything else
// (informer, queue, validation, caching, single-flight, timeouts, retries,
// status writes, Events, metrics, traces) is the runtime's job.
import type { OwnerReference, ParamValue, RefSource, ResolutionRequest } from "@quarry/api";
import type { KubeClient, KubeObject, ResourceType } from "@quarry/kube";
import type { Logger, Span } from "@quarry/observability";
import type { ErrorObject } from "ajv";
import type { ConfigKeys } from "./config-keys.ts";
import type { WaitBackoff } from "./wait-backoff.ts";

/** Params as the resolver sees them: Tekton's list turned into an object by name. */
export type Params = Record<string, ParamValue>;

/** A JSON Schema (draft-07, as ajv takes it) describing the params object. */
export type ParamsSchema = Record<string, unknown>;

/** A params schema compiled ahead of time: ajv's standalone code (scripts/gen-validators.ts). */
export type CompiledParamsValidate = ((params: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** The resolver's live config: its ConfigMap's data, plus the runtime's own keys. */
export type ResolverConfig = Readonly<Record<string, string>>;

export interface ResolveContext {
  /** Aborted on timeout, when the request is deleted or done, or on shutdown. */
  signal: AbortSignal;
  /** The request's namespace: credentials and policy are looked up here, never elsewhere. */
  namespace: string;
  name: string;
  /** `spec.url`, when the client sent one. */
  url: string | undefined;
  request: ResolutionRequest;
  /** 1 on the first try; n after n-1 transient failures in a row (a Pending or success resets it). */
  attempt: number;
  config: ResolverConfig;
  log: Logger;
  span: Span;
  /** The runtime's API client (the service account's rights), e.g. to create a request's children. */
  client: KubeClient;
  /**
   * A controller ownerReference to this request. Put it on every object created for the request:
   * an event on the object then wakes the request (see `watches`), and deleting the request deletes it.
   */
  ownerReference: OwnerReference;
  /**
   * The cached objects of a resource in `watches` that this request owns (any ownerReference
   * carrying its uid), sorted by name. Throws for a resource the resolver did not declare.
   */
  children<T extends KubeObject = KubeObject>(resource: ResourceType): T[];
}

export interface Resolved {
  data: Uint8Array;
  /** Written to status.annotations (content type defaults to application/x-yaml). */
  annotations?: Record<string, string>;
  refSource?: RefSource;
}

/**
 * Not finished yet: the request stays open, nothing is written to it (but the one-time
 * `quarry.dev/accepted-by` stamp), no attempt is counted and nothing is cached or shared. The
 * request is reconciled again when one of its children (`watches`) changes, after `wakeAfterMs`,
 * on a spec change or resync, whichever comes first. Build one with `pending()`.
 */
export interface Pending {
  readonly pending: true;
  /** What the resolution waits for (logged and put on the span, not written). */
  readonly message: string | undefined;
  /** Reconcile again after this long even if nothing changed. */
  readonly wakeAfterMs: number | undefined;
}

/** A Pending outcome; `wakeAfterMs` must be a positive finite number when given. */
export function pending(opts: { message?: string; wakeAfterMs?: number } = {}): Pending {
  const { message, wakeAfterMs } = opts;
  if (wakeAfterMs !== undefined && !(Number.isFinite(wakeAfterMs) && wakeAfterMs > 0)) {
    throw new RangeError(
      `pending: wakeAfterMs must be a positive number of milliseconds, got ${wakeAfterMs}`,
    );
  }
  return { pending: true, message, wakeAfterMs };
}

export function isPending(outcome: Resolved | Pending): outcome is Pending {
  return (outcome as Partial<Pending>).pending === true;
}

/** A child resource the resolver creates for requests: watched, and readable through `ctx.children`. */
export interface ChildWatch {
  /** e.g. `configMaps`, `secrets` from @quarry/kube, or the resolver's own ResourceType for pods. */
  resource: ResourceType;
  /** Narrows the informer to what the resolver creates (recommended: a label it puts on each child). */
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * Watch only the namespaces requests come from: an informer per namespace, started by the first
   * `ctx.children` of a request there, so the resolver needs no cluster-wide read of the resource.
   * For children it may touch only where a namespace opted in (RBAC granted per namespace): a
   * namespace whose list is refused (403) is not watched, and the next `ctx.children` there tries
   * again. Default false: one informer over the watched namespaces.
   */
  perNamespace?: boolean;
}

/**
 * What every resolver implements: the type it answers, its params schema and `resolve`; the
 * optional members tune caching, deadlines and config checks. A resolver whose requests run as
 * jobs (objects it creates per request) is a JobResolver.
 */
export interface Resolver<P extends Params = Params> {
  /** The value of the `resolution.tekton.dev/type` label this resolver answers, e.g. "git". */
  readonly type: string;
  /** Other names for the same type, e.g. ["in-cluster"]. */
  readonly aliases?: readonly string[];
  /** Params schema; violations fail the request with InvalidParams naming the param. */
  readonly paramsSchema: ParamsSchema;
  /**
   * paramsSchema compiled ahead of time (scripts/gen-validators.ts writes it); without it the
   * runtime compiles the schema with ajv at start, and ajv stays loaded.
   */
  readonly compiledParams?: CompiledParamsValidate;
  /**
   * Fetches the resource. Throw a ResolutionError for a terminal failure (bad
   * input, not found, forbidden, ...); any other error is transient and is
   * retried with backoff until the runtime's attempts or deadline run out.
   * A slow source returns `pending(...)` instead of waiting: each call takes the next step
   * (create a child, read its state) and returns within the per-attempt deadline.
   */
  resolve(params: P, ctx: ResolveContext): Promise<Resolved | Pending>;
  /** True when the params pin content (a full commit SHA, an @sha256 digest): cacheable in "auto" mode. */
  isImmutable?(params: P): boolean;
  /** Per-attempt deadline in ms; defaults to the config's `resolution-timeout`. */
  timeout?(params: P, config: ResolverConfig): number;
  /**
   * The resolver's own retry schedule under `config` (Tekton's backoff-* keys: parseWaitBackoff):
   * a request then gets `steps` attempts spaced by that backoff. Undefined (or absent): the
   * runtime's max-attempts and its exponential delays.
   */
  retryBackoff?(config: ResolverConfig): WaitBackoff | undefined;
  /** Checks the resolver's own config keys; throw ConfigError (from @quarry/kube) naming the key. */
  validateConfig?(config: ResolverConfig): void;
  /**
   * The keys the resolver reads from its ConfigMap (and Tekton's it does not implement). Any
   * other key there, unless it is the runtime's, is logged and raised as a Warning Event on the
   * ConfigMap once per change. Without it nothing is reported.
   */
  readonly configKeys?: ConfigKeys;
}

/**
 * A resolver whose requests run as jobs: it creates objects for each request (a pod, a build),
 * takes one step per `resolve` call and answers `pending()` until they are done. runResolver
 * watches its children, so an event on one wakes the request that owns it.
 */
export interface JobResolver<P extends Params = Params> extends Resolver<P> {
  /**
   * Child resources the resolver creates per request (with `ctx.ownerReference`). runResolver
   * watches them in the watched namespaces: an event on a child wakes the request that owns it.
   */
  readonly watches: readonly ChildWatch[];
  /**
   * True when a result speaks for the request that asked only (it names objects made for that
   * request): it is never cached, whatever the `cache` param says, and never handed to an
   * identical request in flight.
   */
  readonly perRequest?: boolean;
  /**
   * Whether the runtime checks that the result is a Tekton resource of an allowed kind (default
   * true): false for a job whose output is something else (the pipe resolver's files).
   */
  readonly checksKind?: boolean;
}

/** The job members of any resolver, with their defaults where it is not a JobResolver. */
export function jobTraits(resolver: Resolver | JobResolver): {
  watches: readonly ChildWatch[];
  perRequest: boolean;
  checksKind: boolean;
} {
  const job: Partial<JobResolver> = resolver;
  return {
    watches: job.watches ?? [],
    perRequest: job.perRequest === true,
    checksKind: job.checksKind !== false,
  };
}
