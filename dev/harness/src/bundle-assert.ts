// Assertions shared by the bundle failure scenarios: how a refusal must look
// on the request (TEP-0060's Succeeded=False/ResolutionFailed, Quarry's finer
// reason in an annotation) and that no data was written beside it.
import assert from "node:assert/strict";
import type { ResolutionRequest } from "@quarry/api";
import { reasonOf } from "./bundle-scenario.ts";
import { succeeded } from "./scenario.ts";

/** Asserts `rr` failed with Quarry reason `reason` (and a message matching `message`); returns the message. */
export function assertFailed(rr: ResolutionRequest, reason: string, message?: RegExp): string {
  const cond = succeeded(rr);
  const status = JSON.stringify(rr.status);
  assert.equal(cond?.status, "False", status);
  assert.equal(cond?.reason, "ResolutionFailed", status);
  assert.equal(reasonOf(rr), reason, status);
  assert.equal(rr.status?.data ?? "", "", "a failed request must carry no data");
  const text = cond?.message ?? "";
  if (message) assert.match(text, message);
  return text;
}

/** `text` as a literal inside a RegExp (hosts, digests, references in messages). */
export function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
