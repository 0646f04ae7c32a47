export {
  BLOCKED_NETWORKS_KEY,
  BlockedNetworks,
  DEFAULT_BLOCKED_NETWORKS,
  NETWORK_SETS,
  parseBlockedNetworks,
} from "./blocked-networks.ts";
export { cacheKey, ResultCache, SingleFlight, useCache } from "./cache.ts";
export {
  checkedLookup,
  checkLiteralAddress,
  checkTarget,
  type LookupAll,
  resolveChecked,
} from "./checked-lookup.ts";
export { checkKind, checkSize, DEFAULT_ALLOWED_KINDS } from "./checks.ts";
export {
  configParser,
  defaultRuntimeConfig,
  type LoadedConfig,
  parseResolverConfig,
  type RuntimeConfig,
  runtimeTimeoutMs,
} from "./config.ts";
export { failureStatus, type Plan, planResolution, successStatus } from "./decide.ts";
export {
  bypassesProxy,
  describeEgressFailure,
  EGRESS_KEYS,
  type Egress,
  EgressDispatchers,
  EgressError,
  effectiveEgress,
  egressFetch,
  NO_EGRESS,
  parseCaBundle,
  parseEgress,
  parseProxyUrl,
  proxyFor,
  redactUrl,
  trustedCas,
} from "./egress.ts";
export { type EgressErrorCode, egressReason, findEgressError } from "./egress-error.ts";
export { forbidden, invalidParams, notFound, ResolutionError } from "./errors.ts";
export { metadataHostProblem } from "./metadata-hosts.ts";
export { type CacheMode, ParamsValidator, paramsToObject } from "./params.ts";
export { followRedirects, isRedirect, type RedirectPolicy, type SendOnce } from "./redirects.ts";
export {
  type ChildWatch,
  isPending,
  type Params,
  type ParamsSchema,
  type Pending,
  pending,
  type ResolveContext,
  type Resolved,
  type Resolver,
  type ResolverConfig,
} from "./resolver.ts";
export { readCappedBody } from "./response-body.ts";
export { type HostedResolver, type RunResolverOptions, runResolver, runResolvers } from "./run.ts";
