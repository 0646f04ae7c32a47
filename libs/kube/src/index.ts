// @quarry/kube, the controller runtime a service ships with. Test doubles
// (FakeKubeClient, FakeClock, FakeEventRecorder) are in @quarry/kube/testing,
// so no production import graph reaches them.

// client: the REST client, its errors, resources and writes
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
} from "./client/client.ts";
export {
  ApiError,
  asTransientError,
  causeChain,
  errorMessage,
  isApiError,
  isPermanentError,
  PermanentError,
  TransientError,
  transientBackoff,
  transientRetryAfter,
  WatchExpiredError,
  watchEventError,
} from "./client/errors.ts";
export { type EventRecorder, type EventType, KubeEventRecorder } from "./client/events.ts";
export { setTlsFields, type TlsMaterial } from "./client/http-transport.ts";
export type { Authentication } from "./client/kubeconfig.ts";
export { nodeHttp } from "./client/node-http.ts";
export { controllerOwner, controllerOwnerKey, type OwnerMatch } from "./client/owners.ts";
export { changedFields, lockedMergePatch, patchStatus } from "./client/patch.ts";
export {
  apiVersionOf,
  configMaps,
  events,
  namespaces,
  type ResourceType,
  resourcePath,
  secrets,
  serviceAccounts,
} from "./client/resources.ts";
// config: live ConfigMaps and the values in them
export { ConfigError, type ConfigMapObject, type ConfigWarning, LiveConfig } from "./config/config.ts";
export { configDuration, configPattern, configPatterns } from "./config/config-values.ts";
export { formatDuration, parseDuration } from "./config/duration.ts";
export { parseSize } from "./config/size.ts";
// ha: buckets of keys led by Leases
export { bucketLeaseName, bucketOf, MAX_BUCKETS, memberLeaseName } from "./ha/bucket-hash.ts";
export {
  type BucketMetrics,
  bucketMetrics,
  type SkippingCache,
  skippedEventsMetric,
} from "./ha/bucket-metrics.ts";
export { BucketSet, type BucketSetOptions, type BucketStatus } from "./ha/bucket-set.ts";
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
} from "./ha/elector.ts";
export { type LeaderElectionSettings, leaderElectionFromEnv } from "./ha/leader-settings.ts";
export { type Lease, LeaseClient, type LeaseSpec, leases, microTime } from "./ha/lease.ts";
export { Membership, type MembershipOptions } from "./ha/membership.ts";
// informers: list/watch caches, shared per process
export { InformerFactory, type InformerRequest } from "./informers/factory.ts";
export { byLabel, byOwnerUid, type IndexFunc } from "./informers/indexer.ts";
export {
  Informer,
  type InformerHandlers,
  type InformerOptions,
  type KeyFilter,
  objectKey,
  splitKey,
} from "./informers/informer.ts";
export { type Lister, MapLister } from "./informers/lister.ts";
export { type PeekedEvent, peekWatchEvent } from "./informers/peek-event.ts";
export {
  DATA_OMITTED,
  dropApplyMetadata,
  dropManagedFields,
  dropRequestData,
  keepWhole,
  type Transform,
} from "./informers/transforms.ts";
// queue: work queues and the controllers that drain them
export {
  Controller,
  type ReconcileContext,
  type ReconcileOutcome,
  type Reconciler,
} from "./queue/controller.ts";
export { type QueueOwner, workQueueMetrics } from "./queue/queue-metrics.ts";
export { runWorkers, WorkQueue, type WorkQueueMetrics } from "./queue/workqueue.ts";
// the service runtime that wires all of the above
export { type RuntimeSettings, ServiceRuntime, settingsFromEnv } from "./runtime.ts";
export { type UntilAnsweredOptions, untilAnswered } from "./startup.ts";
// time: clocks and retry delays
export { ExponentialBackoff, RetryDelay } from "./time/backoff.ts";
export { type Clock, realClock } from "./time/clock.ts";
