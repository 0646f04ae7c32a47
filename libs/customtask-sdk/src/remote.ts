// A run's remote definition: the ResolutionRequest for a `ref`/`customRef`
// with `resolver` + `params`. The run-controller creates it as soon as the run
// appears; a task built on this SDK creates (or adopts) the same request by
// the same deterministic name when it gets there first, so it works with or
// without the run-controller deployed.
import { type AnyRun, type ResolutionRequest, requestNameFor, runView } from "@quarry/api";
import { type RequestResolutionInput, readOutcome } from "@quarry/requester";
import yaml from "js-yaml";
import type { RefOutcome } from "./task.ts";

/** Label on a run's ResolutionRequest: the run's name (so controllers watch only run-owned requests). */
export const LABEL_RUN = "quarry.dev/run";

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export type RemoteRequest =
  | { type: "none" }
  | { type: "invalid"; message: string }
  | { type: "request"; name: string; input: RequestResolutionInput };

/** The request a run needs, if its reference is remote. */
export function remoteRequest(run: AnyRun): RemoteRequest {
  const view = runView(run);
  const resolver = view.ref?.resolver;
  if (!resolver) return { type: "none" };
  const { name, namespace, uid } = run.metadata;
  if (!DNS_LABEL.test(resolver) || resolver.length > 63)
    return {
      type: "invalid",
      message: `resolver "${resolver}" is not a valid resolver name (a DNS-1123 label)`,
    };
  if (!name || !namespace || !uid)
    return { type: "invalid", message: "run has no name, namespace or uid yet" };
  const params = view.ref?.params ?? [];
  const input: RequestResolutionInput = {
    namespace,
    resolverType: resolver,
    params,
    owner: { apiVersion: run.apiVersion, kind: run.kind, name, uid },
    labels: { [LABEL_RUN]: name },
  };
  const requestName = requestNameFor({ resolverType: resolver, namespace, name, spec: { params } });
  return { type: "request", name: requestName, input };
}

/** What a run's request says, with the definition parsed (YAML or JSON) once resolved. */
export function refOutcome(rr: ResolutionRequest): RefOutcome {
  const request = rr.metadata.name ?? "";
  const outcome = readOutcome(rr);
  if (outcome.state === "pending") return { state: "pending", request, message: outcome.message };
  if (outcome.state === "failed") {
    const failed: RefOutcome = { state: "failed", request, reason: outcome.reason, message: outcome.message };
    if (outcome.quarryReason) failed.quarryReason = outcome.quarryReason;
    return failed;
  }
  let object: unknown;
  try {
    object = yaml.load(Buffer.from(outcome.data).toString("utf8"));
  } catch (err) {
    return {
      state: "failed",
      request,
      reason: "InvalidDefinition",
      message: `resolved definition is not YAML: ${(err as Error).message.split("\n")[0]}`,
    };
  }
  const resolved: RefOutcome = { state: "resolved", request, data: outcome.data, object };
  if (outcome.refSource) resolved.refSource = outcome.refSource;
  return resolved;
}
