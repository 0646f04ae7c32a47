// @quarry/kube/testing: the doubles tests run controllers against. Kept out
// of the production barrel (@quarry/kube) so no service imports them.
export {
  type FakeAction,
  type FakeCall,
  FakeKubeClient,
  type FakeKubeClientOptions,
  type FakeReactor,
  type FakeVerb,
  type FakeWriteVerb,
} from "./fake-client.ts";
export { FakeClock } from "./fake-clock.ts";
export { FakeEventRecorder, type RecordedEvent } from "./fake-recorder.ts";
export { reconcileContext } from "./reconcile-context.ts";
