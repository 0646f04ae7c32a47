// Pipe runs: a Run/CustomRun whose ref is quarry.dev Pipe `<name>` asks the
// pipe resolver for that Pipe through one ResolutionRequest per attempt, and
// ends with a result per piped file, `key → name of the ConfigMap/Secret`, so
// a later pipeline task mounts it by `$(tasks.<t>.results.<key>)` (KEP-17's
// `{{ .Pipes.key }}`). Decisions only (no I/O): which request an attempt
// needs, and what the run is given what that request says.
import {
  type AnyRun,
  type Param,
  PIPE_KIND,
  pipeResultsOf,
  QUARRY_GROUP,
  QuarryReason,
  RESOLUTION_REQUEST_KIND,
  RESOLUTION_V1BETA1,
  type ResolutionRequest,
  refFieldName,
  requestNameFor,
  runView,
} from "@quarry/api";
import type { Step } from "@quarry/customtask-sdk";
import { LABEL_RUN } from "@quarry/customtask-sdk/internal";
import { type RequestResolutionInput, readOutcome } from "@quarry/requester";
import yaml from "js-yaml";

/** The resolver type of pipe requests (the pipe resolver's). */
export const PIPE_RESOLVER_TYPE = "pipe";
/** A Pipe run's spec cannot name a Pipe (an embedded spec, a remote resolver, no name). */
export const ReasonInvalidPipeRun = "InvalidPipeRun";
/** The pipe request resolved, but its status.data is not the list the pipe resolver writes. */
export const ReasonInvalidPipeResult = "InvalidPipeResult";

/** The pipe resolver's own params; a run's params are the strategy's and cannot shadow them. */
const RESOLVER_PARAMS: readonly string[] = ["pipe", "strategy", "strategyKind", "files", "cache"];

/**
 * Failures another attempt cannot mend: the run's or the Pipe's input is wrong, or an output name
 * is taken. Anything else (a pod that failed or never started, a copy that broke, the global
 * timeout) is worth a retry while the run has retries left.
 */
const FINAL_REASONS: ReadonlySet<string> = new Set([
  QuarryReason.InvalidParams,
  QuarryReason.InvalidRequest,
  QuarryReason.Forbidden,
  QuarryReason.TooLarge,
  QuarryReason.UnknownParam,
  QuarryReason.MissingParam,
  QuarryReason.DuplicateParam,
  QuarryReason.InvalidParamType,
  QuarryReason.ParamsTooLarge,
  QuarryReason.InvalidParamReference,
  QuarryReason.PipeNotFound,
  QuarryReason.StrategyNotFound,
  QuarryReason.InvalidStrategy,
  QuarryReason.InvalidPipe,
  QuarryReason.InvalidEnvFile,
  QuarryReason.OutputConflict,
  QuarryReason.NoResolver,
]);

export type PipeRequestPlan =
  | { ok: true; name: string; input: RequestResolutionInput }
  | { ok: false; reason: string; message: string };

/** A run serves the Pipe task when its ref or embedded spec is quarry.dev (any version) Pipe. */
export const PIPE_TASK = { group: QUARRY_GROUP, kind: PIPE_KIND } as const;

/**
 * The request of the run's `attempt` (1 for the first): `pipe: <ref name>` and the run's params,
 * owned by the run (so the stored files are, too). Each attempt hashes its own base name, so a
 * retry asks afresh instead of reading the failed attempt's answer.
 */
export function pipeRequestFor(run: AnyRun, attempt: number): PipeRequestPlan {
  const view = runView(run);
  const fields = refFieldName(view.flavour);
  const { name, namespace, uid } = run.metadata;
  const invalid = (message: string): PipeRequestPlan => ({
    ok: false,
    reason: ReasonInvalidPipeRun,
    message,
  });
  if (view.embedded)
    return invalid(
      `a Pipe run names a Pipe in ${fields.ref}.name; an embedded ${fields.spec} is not supported`,
    );
  if (view.ref?.resolver)
    return invalid(
      `${fields.ref}.resolver is set: a Pipe run names a Pipe in its own namespace, which is not resolved remotely`,
    );
  const pipe = view.ref?.name;
  if (!pipe) return invalid(`${fields.ref}.name must name a Pipe in namespace ${namespace}`);
  if (!name || !namespace || !uid) return invalid("run has no name, namespace or uid yet");
  const shadowing = view.params.find((p) => RESOLVER_PARAMS.includes(p.name));
  if (shadowing)
    return {
      ok: false,
      reason: QuarryReason.InvalidParams,
      message: `param "${shadowing.name}" is the pipe resolver's own; a Pipe run's params are the strategy's (${RESOLVER_PARAMS.join(", ")} are reserved)`,
    };
  const params: Param[] = [{ name: "pipe", value: pipe }, ...view.params];
  const baseName = attempt <= 1 ? name : `${name}-attempt-${attempt}`;
  const input: RequestResolutionInput = {
    namespace,
    resolverType: PIPE_RESOLVER_TYPE,
    params,
    baseName,
    owner: { apiVersion: run.apiVersion, kind: run.kind, name, uid },
    labels: { [LABEL_RUN]: name },
  };
  const requestName = requestNameFor({
    resolverType: PIPE_RESOLVER_TYPE,
    namespace,
    name: baseName,
    spec: { params },
  });
  return { ok: true, name: requestName, input };
}

/**
 * What the run is, given its attempt's request, which is recorded among the run's
 * childReferences (TEP-0100: by reference, never its data) next to earlier attempts'.
 */
export function pipeStep(run: AnyRun, rr: ResolutionRequest): Step {
  const step = stepOf(rr);
  const name = rr.metadata.name ?? "";
  const children = run.status?.childReferences ?? [];
  if (!children.some((c) => c.kind === RESOLUTION_REQUEST_KIND && c.name === name))
    step.childReferences = [
      ...children,
      { apiVersion: RESOLUTION_V1BETA1, kind: RESOLUTION_REQUEST_KIND, name },
    ];
  return step;
}

function stepOf(rr: ResolutionRequest): Step {
  const request = rr.metadata.name ?? "";
  const outcome = readOutcome(rr);
  if (outcome.state === "pending")
    return {
      type: "running",
      message: `waiting for ResolutionRequest ${request}${outcome.message ? `: ${outcome.message}` : ""}`,
    };
  if (outcome.state === "failed") {
    const reason = outcome.quarryReason ?? outcome.reason;
    return {
      type: "failed",
      reason,
      message: `ResolutionRequest ${request} failed: ${outcome.message}`,
      retryable: !FINAL_REASONS.has(reason),
    };
  }
  let list: unknown;
  try {
    list = yaml.load(Buffer.from(outcome.data).toString("utf8"));
  } catch {
    list = undefined;
  }
  const results = pipeResultsOf(list);
  if (!results)
    return {
      type: "failed",
      reason: ReasonInvalidPipeResult,
      message: `ResolutionRequest ${request} resolved, but its data is not a list of {key, kind, name, sha256}`,
      retryable: false,
    };
  return {
    type: "succeeded",
    reason: "Succeeded",
    message: `stored ${results.map((r) => `${r.kind} ${r.name}`).join(", ") || "nothing"}`,
    results: results.map((r) => ({ name: r.key, value: r.name })),
  };
}
