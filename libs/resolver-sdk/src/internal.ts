// @quarry/resolver-sdk/internal: the runtime's parts, for Quarry's own services that reuse them
// (the bundle resolver's digest lookups share calls through SingleFlight). Resolver authors use
// the package's main entry; nothing here is promised to stay.
export { NETWORK_SETS } from "./blocked-networks.ts";
export { cacheKey, ResultCache, SingleFlight, useCache } from "./cache.ts";
export { checkKind, checkSize, DEFAULT_ALLOWED_KINDS } from "./checks.ts";
export {
  defaultRuntimeConfig,
  type LoadedConfig,
  parseResolverConfig,
  type RuntimeConfig,
} from "./config.ts";
export { decideResolution, failureStatus, type ResolutionDecision, successStatus } from "./decide.ts";
export { bypassesProxy, EGRESS_KEYS, NO_EGRESS } from "./egress.ts";
export { type ResolverMetrics, resolverMetrics } from "./metrics.ts";
export { type CacheMode, paramsToObject } from "./params.ts";
export { isRedirect } from "./redirects.ts";
