// Condition type and reasons. Quarry keeps Tekton's coarse reasons on the
// Succeeded condition (so Tekton clients keep working) and puts its finer
// reason in status.annotations["quarry.dev/reason"].

export const CONDITION_SUCCEEDED = "Succeeded";

/** Tekton's reasons for a ResolutionRequest's Succeeded condition. */
export const TektonReason = {
  ResolutionInProgress: "ResolutionInProgress",
  ResolutionFailed: "ResolutionFailed",
  ResolutionTimedOut: "ResolutionTimedOut",
} as const;
export type TektonReason = (typeof TektonReason)[keyof typeof TektonReason];

export const REASON_RESOLUTION_IN_PROGRESS = TektonReason.ResolutionInProgress;
export const REASON_RESOLUTION_FAILED = TektonReason.ResolutionFailed;
export const REASON_RESOLUTION_TIMED_OUT = TektonReason.ResolutionTimedOut;

/** Quarry's finer reasons, written to status.annotations["quarry.dev/reason"]. */
export const QuarryReason = {
  InvalidParams: "InvalidParams",
  NotFound: "NotFound",
  Forbidden: "Forbidden",
  TooLarge: "TooLarge",
  UnsupportedKind: "UnsupportedKind",
  SourceUnavailable: "SourceUnavailable",
  /** The lifecycle controller's: no resolver accepted the request before the global timeout. */
  NoResolver: "NoResolver",
  /** The lifecycle controller's: the request has no resolver label, so no resolver can claim it. */
  MissingResolverLabel: "MissingResolverLabel",
  /** The lifecycle controller's: a resolver accepted the request but did not finish it before the global timeout. */
  TimedOut: "TimedOut",
  InvalidRequest: "InvalidRequest",
  /** The source is not what the resolver reads (e.g. an image that breaks the Tekton bundle contract). */
  InvalidBundle: "InvalidBundle",
  /** Bytes from the source did not match the digest they were fetched by; they were not used. */
  DigestMismatch: "DigestMismatch",
  // Params of specs Quarry itself runs (substitution.ts resolveParams / substitute).
  /** A param was given that the spec does not declare. */
  UnknownParam: "UnknownParam",
  /** A declared param has no default and was not given. */
  MissingParam: "MissingParam",
  /** Two given params, or two declared params, share a name. */
  DuplicateParam: "DuplicateParam",
  /** A param value or default does not have its declared type, or an object value lacks a declared key. */
  InvalidParamType: "InvalidParamType",
  /** More params, or larger values, than Quarry accepts (caps in substitution.ts). */
  ParamsTooLarge: "ParamsTooLarge",
  /** A $(params…) reference is malformed, names an undeclared param, or uses a param where its type is not allowed. */
  InvalidParamReference: "InvalidParamReference",
  // Pipes (the pipe resolver).
  /** The Pipe a request names does not exist. */
  PipeNotFound: "PipeNotFound",
  /** The PipeStrategy or ClusterPipeStrategy a Pipe or request names does not exist. */
  StrategyNotFound: "StrategyNotFound",
  /** A strategy breaks the pipe pod rules (one init container, one emptyDir it mounts, no containers, restartPolicy OnFailure or unset). */
  InvalidStrategy: "InvalidStrategy",
  /** A Pipe's (or a request's) piped files are malformed: a bad path or key, duplicate keys, a file outside the emptyDir. */
  InvalidPipe: "InvalidPipe",
  /** A piped envFile is not KEY=VALUE lines; the message names the line, never its content. */
  InvalidEnvFile: "InvalidEnvFile",
  /** A pipe pod cannot run: an image pull fails, its container config is broken, its init container crash-loops or the pod failed. */
  PodFailed: "PodFailed",
  /** A pipe pod's init container did not finish within the pipe resolver's pending-timeout. */
  PodPendingTimeout: "PodPendingTimeout",
  /** A piped file could not be read out of the pod (unreadable, or the waiting container's tar failed). */
  CopyFailed: "CopyFailed",
  /** A pipe's ConfigMap or Secret name is taken by an object the resolver cannot verify as its own, identical output; nothing is overwritten. */
  OutputConflict: "OutputConflict",
} as const;
export type QuarryReason = (typeof QuarryReason)[keyof typeof QuarryReason];

const quarryReasons: ReadonlySet<string> = new Set(Object.values(QuarryReason));

export function isQuarryReason(value: unknown): value is QuarryReason {
  return typeof value === "string" && quarryReasons.has(value);
}
