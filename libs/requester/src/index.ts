// @quarry/requester: ask for a resolution the way Tekton Pipelines does (same
// names, same labels, same reading of the outcome), create-or-adopt, and wait.
export {
  RequestMismatchError,
  RequestNotFoundError,
  RequestTerminatingError,
  WaitAbortedError,
  WaitTimeoutError,
} from "./errors.ts";
export {
  decodeStdBase64,
  type FailedOutcome,
  isTerminal,
  type Outcome,
  type PendingOutcome,
  type ResolvedOutcome,
  readOutcome,
  type TerminalOutcome,
} from "./outcome.ts";
export { controllerRef, sharedOwnerRef, withSharedOwner } from "./owners.ts";
export { buildRequest, type RequestResolutionInput, requestResolution } from "./request.ts";
export { paramDifferences, requestDifferences, type WantedRequest } from "./spec.ts";
export { type WaitOptions, type WatchingClient, waitFor } from "./wait.ts";
