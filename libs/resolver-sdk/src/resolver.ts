// What a resolver author writes: a handful of members. Everything else
// (informer, queue, validation, caching, single-flight, timeouts, retries,
// status writes, Events, metrics, traces) is the runtime's job.
import type { ParamValue, RefSource, ResolutionRequest } from "@quarry/api";
import type { Logger, Span } from "@quarry/observability";

/** Params as the resolver sees them: Tekton's list turned into an object by name. */
export type Params = Record<string, ParamValue>;

/** A JSON Schema (draft-07, as ajv takes it) describing the params object. */
export type ParamsSchema = Record<string, unknown>;

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
  config: ResolverConfig;
  log: Logger;
  span: Span;
}

export interface Resolved {
  data: Uint8Array;
  /** Written to status.annotations (content type defaults to application/x-yaml). */
  annotations?: Record<string, string>;
  refSource?: RefSource;
}

export interface Resolver<P extends Params = Params> {
  /** The value of the `resolution.tekton.dev/type` label this resolver answers, e.g. "git". */
  readonly type: string;
  /** Other names for the same type, e.g. ["in-cluster"]. */
  readonly aliases?: readonly string[];
  /** Params schema; violations fail the request with InvalidParams naming the param. */
  readonly paramsSchema: ParamsSchema;
  /**
   * Fetches the resource. Throw a ResolutionError for a terminal failure (bad
   * input, not found, forbidden, ...); any other error is transient and is
   * retried with backoff until the runtime's attempts or deadline run out.
   */
  resolve(params: P, ctx: ResolveContext): Promise<Resolved>;
  /** True when the params pin content (a full commit SHA, an @sha256 digest): cacheable in "auto" mode. */
  isImmutable?(params: P): boolean;
  /** Per-attempt deadline in ms; defaults to the config's `resolution-timeout`. */
  timeout?(params: P, config: ResolverConfig): number;
  /** Whether the runtime checks that the result is a Tekton resource of an allowed kind (default true). */
  readonly checksKind?: boolean;
  /** Checks the resolver's own config keys; throw ConfigError (from @quarry/kube) naming the key. */
  validateConfig?(config: ResolverConfig): void;
}
