// The runtime's decisions as pure functions: what to do with a request, and
// the status to write for each outcome. I/O lives in reconciler.ts.
import {
  ANNOTATION_CONTENT_TYPE,
  ANNOTATION_REASON,
  CONDITION_SUCCEEDED,
  isDone,
  type QuarryReason,
  REASON_RESOLUTION_FAILED,
  type ResolutionRequest,
  setCondition,
} from "@quarry/api";
import { cacheKey, useCache } from "./cache.ts";
import type { RuntimeConfig } from "./config.ts";
import { type CacheMode, type ParamsValidator, paramsToObject } from "./params.ts";
import {
  type JobResolver,
  jobTraits,
  type Params,
  type Resolved,
  type Resolver,
  type ResolverConfig,
} from "./resolver.ts";

/** What to do with a request: leave it, fail it, or resolve it (with the cache key, mode and deadline). */
export type ResolutionDecision =
  | { kind: "skip"; why: string }
  | { kind: "fail"; reason: QuarryReason; message: string }
  | {
      kind: "resolve";
      params: Params;
      cacheKey: string;
      cacheMode: CacheMode;
      useCache: boolean;
      timeoutMs: number;
    };

export function decideResolution(
  rr: ResolutionRequest,
  resolver: Resolver | JobResolver,
  validator: ParamsValidator,
  config: { runtime: RuntimeConfig; raw: ResolverConfig },
): ResolutionDecision {
  if (isDone(rr.status)) return { kind: "skip", why: "done" };
  if (rr.status?.data) return { kind: "skip", why: "already resolved" };
  const parsed = paramsToObject(rr.spec?.params);
  if (!parsed.ok) return { kind: "fail", reason: "InvalidParams", message: parsed.message };
  const invalid = validator.check(parsed.params);
  if (invalid) return { kind: "fail", reason: "InvalidParams", message: invalid };
  const cacheMode = parsed.cacheMode ?? config.runtime.defaultCacheMode;
  const immutable = resolver.isImmutable?.(parsed.params) ?? false;
  const key = cacheKey(resolver.type, rr.metadata.namespace ?? "", parsed.params, rr.spec?.url);
  const own = jobTraits(resolver).perRequest;
  return {
    kind: "resolve",
    params: parsed.params,
    // a per-request result's flight key is the request's own, so no identical request joins it
    cacheKey: own ? `${key}#${rr.metadata.uid ?? rr.metadata.name ?? ""}` : key,
    cacheMode,
    useCache: !own && useCache(cacheMode, immutable),
    timeoutMs: resolver.timeout?.(parsed.params, config.raw) ?? config.runtime.resolutionTimeoutMs,
  };
}

export interface CacheInfo {
  type: string;
  operation: "store" | "retrieve";
  storedAt: string;
}

/** status fields for a success; conditions are the lifecycle controller's to set. */
export function successStatus(resolved: Resolved, cache?: CacheInfo): Record<string, unknown> {
  const annotations: Record<string, string> = {
    [ANNOTATION_CONTENT_TYPE]: "application/x-yaml",
    ...resolved.annotations,
  };
  if (cache) {
    annotations["resolution.tekton.dev/cached"] = "true";
    annotations["resolution.tekton.dev/cache-operation"] = cache.operation;
    annotations["resolution.tekton.dev/cache-resolver-type"] = cache.type;
    annotations["resolution.tekton.dev/cache-timestamp"] = cache.storedAt;
  }
  const status: Record<string, unknown> = {
    data: Buffer.from(resolved.data).toString("base64"),
    annotations,
  };
  if (resolved.refSource) {
    status.refSource = resolved.refSource;
    // older clients read status.source
    status.source = resolved.refSource;
  }
  return status;
}

/** A resolver may fail a request itself (TEP-0060); the finer reason goes to an annotation. */
export function failureStatus(reason: QuarryReason, message: string, now: Date): Record<string, unknown> {
  return {
    // a terminal write replaces the whole list (status patch), so it starts from no conditions
    conditions: setCondition(
      undefined,
      { type: CONDITION_SUCCEEDED, status: "False", reason: REASON_RESOLUTION_FAILED, message },
      now,
    ),
    annotations: { [ANNOTATION_REASON]: reason },
  };
}
