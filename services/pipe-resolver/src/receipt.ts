// The receipt: a ConfigMap per request, named like its pod and controlled by
// the request, that records each output the resolver has created (or
// verified) for the request, with the digest of its file (a Secret's keyed:
// digest.ts). It exists because
// the resolver may create Secrets but never read them (RBAC cannot tell
// "Secrets it created" from all Secrets, and get, list, watch, update, patch
// and delete each return a Secret's data), so it cannot look at a Secret to
// learn whether it is its own.
//
//   storing  some outputs are recorded; a replay skips them (same digest) and
//            creates the rest. A Secret that already exists and is not
//            recorded is never taken as the request's own: a crash between
//            creating a Secret and recording it fails the request
//            OutputConflict rather than risk passing off someone else's.
//   stored   every output is recorded: a replay answers from the receipt (no
//            pod, no copy).
//
// It holds names and digests only (what status.data says), never content.
import {
  LABEL_MANAGED_BY,
  LABEL_PIPE,
  LABEL_REQUEST,
  MANAGED_BY_QUARRY,
  type ObjectMeta,
  type OwnerReference,
  type PipeResult,
  pipeResultsOf,
} from "@quarry/api";
import { labelValue, podName, type RequestIdentity } from "./names.ts";
import { resultFields } from "./objects.ts";

/** Marks a receipt among the ConfigMaps of a namespace. */
export const LABEL_RECEIPT = "quarry.dev/pipe-receipt";
const RESULTS_KEY = "results.json";
const STATE_KEY = "state";

export type ReceiptState = "storing" | "stored";

export interface ReceiptObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  data?: Record<string, string>;
}

export interface Receipt {
  state: ReceiptState;
  results: PipeResult[];
}

/** The receipt's name: the request's pod name (unique to the request object, at most 63 characters). */
export function receiptName(request: RequestIdentity): string {
  return podName(request);
}

export function receiptObject(
  request: RequestIdentity,
  pipeName: string,
  owner: OwnerReference,
  receipt: Receipt,
): ReceiptObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: receiptName(request),
      namespace: request.namespace,
      labels: {
        [LABEL_RECEIPT]: "true",
        [LABEL_PIPE]: labelValue(pipeName),
        [LABEL_REQUEST]: labelValue(request.name),
        [LABEL_MANAGED_BY]: MANAGED_BY_QUARRY,
      },
      ownerReferences: [{ ...owner }],
    },
    data: receiptData(receipt),
  };
}

export function receiptData(receipt: Receipt): Record<string, string> {
  const results = receipt.results.map(resultFields);
  return { [STATE_KEY]: receipt.state, [RESULTS_KEY]: JSON.stringify(results) };
}

export type ReadReceipt = { ok: true; receipt: Receipt } | { ok: false; message: string };

/**
 * The receipt found under the request's receipt name, if it is this request's: made by Quarry,
 * controlled by the request (uid), with a state and results of the right shapes.
 */
export function readReceipt(obj: ReceiptObject, requestUid: string): ReadReceipt {
  const name = obj.metadata.name ?? "";
  const not = (why: string): ReadReceipt => ({
    ok: false,
    message: `ConfigMap ${JSON.stringify(name)} ${why}`,
  });
  const m = obj.metadata;
  const controlled = (m.ownerReferences ?? []).some((o) => o.controller === true && o.uid === requestUid);
  if (
    m.labels?.[LABEL_RECEIPT] !== "true" ||
    m.labels?.[LABEL_MANAGED_BY] !== MANAGED_BY_QUARRY ||
    !controlled
  )
    return not("exists but is not this request's pipe receipt");
  const state = obj.data?.[STATE_KEY];
  if (state !== "storing" && state !== "stored") return not(`has no valid ${STATE_KEY}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(obj.data?.[RESULTS_KEY] ?? "");
  } catch {
    return not(`has no valid ${RESULTS_KEY}`);
  }
  if (!Array.isArray(parsed)) return not(`has no valid ${RESULTS_KEY}`);
  const results = pipeResultsOf(parsed);
  if (!results) return not(`has a malformed entry in ${RESULTS_KEY}`);
  return { ok: true, receipt: { state, results } };
}

/**
 * The record of an output in the receipt: undefined when it is not recorded; a message when it is
 * recorded with another digest (the file changed: the pipe pod was made again).
 */
export function recorded(
  receipt: Receipt | undefined,
  r: PipeResult,
): { ok: true } | { ok: false; message: string } | undefined {
  const rec = receipt?.results.find((x) => x.kind === r.kind && x.name === r.name);
  if (!rec) return undefined;
  if (rec.key === r.key && rec.sha256 === r.sha256 && rec.hmacSha256 === r.hmacSha256) return { ok: true };
  return {
    ok: false,
    message: `${r.kind} ${JSON.stringify(r.name)} was stored for this request from a file with another digest (the pipe pod was made again after it was stored, or the digest key changed)`,
  };
}
