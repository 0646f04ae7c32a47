// Terminal resolution failures, with Quarry's finer reason. The condition
// keeps Tekton's ResolutionFailed; the reason goes to
// status.annotations["quarry.dev/reason"].
import type { QuarryReason } from "@quarry/api";

export class ResolutionError extends Error {
  readonly reason: QuarryReason;
  constructor(reason: QuarryReason, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ResolutionError";
    this.reason = reason;
  }
}

export const invalidParams = (message: string) => new ResolutionError("InvalidParams", message);
export const notFound = (message: string) => new ResolutionError("NotFound", message);
export const forbidden = (message: string) => new ResolutionError("Forbidden", message);
