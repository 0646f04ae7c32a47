export { ExponentialBackoff, RetryDelay } from "./backoff.ts";
export { bucketLeaseName, bucketOf, MAX_BUCKETS, memberLeaseName } from "./bucket-hash.ts";
export { BucketSet, type BucketSetOptions, type BucketStatus } from "./bucket-set.ts";
export {
  type KubeClient,
  type KubeObject,
  type ListOptions,
  type ObjectList,
  type RequestOptions,
  RestKubeClient,
  type WatchEvent,
  type WatchEventType,
  type WatchOptions,
} from "./client.ts";
export { type Clock, FakeClock, realClock } from "./clock.ts";
export { ConfigError, type ConfigMapObject, LiveConfig } from "./config.ts";
export { configDuration, configPattern, configPatterns } from "./config-values.ts";
export {
  Controller,
  errorMessage,
  type ReconcileContext,
  type ReconcileOutcome,
  type Reconciler,
} from "./controller.ts";
export { formatDuration, parseDuration } from "./duration.ts";
export {
  type AcquireReason,
  checkLeaseTiming,
  DEFAULT_LEASE_TIMING,
  type ElectorHooks,
  type ElectorState,
  LeaseElector,
  type LeaseElectorOptions,
  type LeaseTiming,
  UNCLAIMED_AFTER_RETRIES,
} from "./elector.ts";
export {
  ApiError,
  asTransientError,
  causeChain,
  isApiError,
  isPermanentError,
  PermanentError,
  TransientError,
  transientRetryAfter,
} from "./errors.ts";
export { type EventRecorder, type EventType, KubeEventRecorder } from "./events.ts";
export {
  type FakeAction,
  type FakeCall,
  FakeKubeClient,
  type FakeKubeClientOptions,
  type FakeReactor,
  type FakeVerb,
  type FakeWriteVerb,
} from "./fake-client.ts";
export { FakeEventRecorder, type RecordedEvent } from "./fake-recorder.ts";
export { setTlsFields, type TlsMaterial } from "./http-transport.ts";
export { byLabel, byOwnerUid, type IndexFunc } from "./indexer.ts";
export { Informer, type InformerHandlers, objectKey, splitKey } from "./informer.ts";
export type { Authentication } from "./kubeconfig.ts";
export { type LeaderElectionSettings, leaderElectionFromEnv } from "./leader-settings.ts";
export { type Lease, LeaseClient, type LeaseSpec, leases, microTime } from "./lease.ts";
export { type Lister, MapLister } from "./lister.ts";
export { Membership, type MembershipOptions } from "./membership.ts";
export { controllerOwner, controllerOwnerKey, type OwnerMatch } from "./owners.ts";
export { changedFields, lockedMergePatch, patchStatus } from "./patch.ts";
export { type QueueOwner, workQueueMetrics } from "./queue-metrics.ts";
export {
  apiVersionOf,
  configMaps,
  events,
  namespaces,
  type ResourceType,
  resourcePath,
  secrets,
  serviceAccounts,
} from "./resources.ts";
export { type RuntimeSettings, ServiceRuntime, settingsFromEnv } from "./runtime.ts";
export { parseSize } from "./size.ts";
export { type UntilAnsweredOptions, untilAnswered } from "./startup.ts";
export {
  DATA_OMITTED,
  dropApplyMetadata,
  dropManagedFields,
  dropRequestData,
  keepWhole,
  type Transform,
} from "./transforms.ts";
export { runWorkers, WorkQueue, type WorkQueueMetrics } from "./workqueue.ts";
