// @quarry/resolver-sdk: what a resolver author uses. The Resolver interface (and JobResolver, for
// resolvers whose requests run as jobs), runResolver, params and errors, and the egress helpers
// that fetch under the operator's CA, proxy and blocked-networks settings. The runtime's own parts
// are in @quarry/resolver-sdk/internal, for Quarry's services that reuse them.
export {
  BLOCKED_NETWORKS_KEY,
  BlockedNetworks,
  DEFAULT_BLOCKED_NETWORKS,
  parseBlockedNetworks,
} from "./blocked-networks.ts";
export {
  checkedLookup,
  checkLiteralAddress,
  checkTarget,
  type LookupAll,
  resolveChecked,
} from "./checked-lookup.ts";
export { configParser, runtimeTimeoutMs } from "./config.ts";
export {
  type ConfigKeys,
  configKeyWarnings,
  RUNTIME_CONFIG_KEYS,
  UNKNOWN_CONFIG_KEY,
  UNSUPPORTED_CONFIG_KEY,
} from "./config-keys.ts";
export {
  type BindingDecision,
  CREDENTIAL_BINDINGS_KEY,
  CREDENTIAL_URLS_ANNOTATION,
  type CredentialBinding,
  checkCredentialBinding,
  matchesUrlPrefix,
  parseCredentialBindings,
  TEKTON_GIT_ANNOTATION_PREFIX,
  type TokenSecretMeta,
} from "./credential-binding.ts";
export {
  type CredentialProblem,
  type CredentialReader,
  type CredentialReaderOptions,
  type CredentialSecret,
  kubeCredentialReader,
} from "./credential-secret.ts";
export {
  describeEgressFailure,
  EGRESS_KEYS,
  type Egress,
  EgressDispatchers,
  EgressError,
  effectiveEgress,
  egressFetch,
  parseCaBundle,
  parseEgress,
  parseProxyUrl,
  proxyFor,
  redactUrl,
  trustedCas,
} from "./egress.ts";
export { type EgressErrorCode, egressReason, findEgressError } from "./egress-error.ts";
export {
  type EgressGetOptions,
  egressGet,
  httpStatusError,
  isTransientStatus,
} from "./egress-get.ts";
export { forbidden, invalidParams, notFound, ResolutionError } from "./errors.ts";
export { metadataHostProblem } from "./metadata-hosts.ts";
export { ParamsValidator } from "./params.ts";
export {
  INSECURE_HOSTS_KEY,
  type InsecureHost,
  mayCarryCredential,
  parseInsecureHosts,
} from "./plain-http.ts";
export { followRedirects, type RedirectPolicy, type SendOnce } from "./redirects.ts";
export {
  type ChildWatch,
  type CompiledParamsValidate,
  isPending,
  type JobResolver,
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
export {
  type HostedResolver,
  type RunResolverOptions,
  runResolver,
  runResolvers,
  wireResolvers,
} from "./run.ts";
export {
  BACKOFF_KEYS,
  backoffDelayMs,
  backoffSchedule,
  parseWaitBackoff,
  TEKTON_BACKOFF_DEFAULTS,
  type WaitBackoff,
} from "./wait-backoff.ts";
