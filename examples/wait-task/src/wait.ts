// TEP-0002's Wait custom task, built only on customtask-sdk: a run of kind
// Wait succeeds once `duration` has passed since its attempt started. The SDK
// handles start, cancel, timeout and retries; this file only says what a Wait
// run is at a given moment. Reasons and messages follow Tekton's own Wait
// test controller where it is right (MissingDuration, UnexpectedParams,
// InvalidDuration, DurationElapsed) and Tekton's run reasons where that
// controller is wrong (cancel and timeout, which the SDK writes).
import type { ParamValue } from "@quarry/api";
import type { CustomTask, RefOutcome, Step, TaskContext } from "@quarry/customtask-sdk";
import { formatDuration, parseDuration } from "@quarry/kube";

export const WAIT_GROUP = "wait.testing.tekton.dev";
export const WAIT_KIND = "Wait";

/** A duration this long is almost certainly a mistake (and overflows timers); refuse it. */
const MAX_DURATION_MS = 7 * 24 * 3600 * 1000;

/** Names for a message, bounded: a run with thousands of params must not make a huge status. */
function listed(names: string[]): string {
  const shown = names.slice(0, 10).map((n) => n.slice(0, 64));
  return names.length > 10 ? `${shown.join(" ")} … and ${names.length - 10} more` : shown.join(" ");
}

function invalid(reason: string, message: string): Step {
  return { type: "failed", reason, message, retryable: false };
}

/** The `duration` default a remote definition declares (Tekton ParamSpec shape under spec.params). */
function declaredDefault(definition: unknown): ParamValue | undefined {
  const params = (definition as { spec?: { params?: unknown } } | null)?.spec?.params;
  if (!Array.isArray(params)) return undefined;
  const duration = params.find((p) => (p as { name?: unknown })?.name === "duration") as
    | { default?: ParamValue }
    | undefined;
  return duration?.default;
}

/** Reads the remote definition when there is one; a Step when the run cannot go on yet. */
function definitionStep(ref: RefOutcome): Step | undefined {
  if (ref.state === "pending")
    return { type: "running", message: `Waiting for definition from ResolutionRequest ${ref.request}` };
  if (ref.state === "failed") {
    const why = ref.quarryReason ? `${ref.quarryReason}: ${ref.message}` : ref.message;
    // no request name when none could be made (an invalid resolver name)
    const where = ref.request ? ` (ResolutionRequest ${ref.request})` : "";
    return invalid(ref.reason, `Could not resolve the Wait definition${where}: ${why}`);
  }
  return undefined;
}

export function parseWaitDuration(value: ParamValue | undefined): { ms: number } | Step {
  if (value === undefined || value === "")
    return invalid("MissingDuration", "The duration param was not passed");
  if (typeof value !== "string")
    return invalid("InvalidDuration", 'The duration param was invalid: it must be a string such as "5s"');
  if (value.trim().startsWith("-"))
    return invalid("InvalidDuration", `The duration param was invalid: "${value}" is negative`);
  let ms: number;
  try {
    ms = parseDuration(value);
  } catch (err) {
    return invalid("InvalidDuration", `The duration param was invalid: ${(err as Error).message}`);
  }
  if (ms > MAX_DURATION_MS)
    return invalid("InvalidDuration", `The duration param was invalid: "${value}" is longer than 168h`);
  return { ms };
}

type DurationSource = { value: ParamValue | undefined } | { step: Step };

/**
 * An embedded Wait (`customSpec: {apiVersion, kind: Wait, spec: {params, duration}}`): the SDK has
 * checked the run's params against the spec's declarations and substituted them, so `duration`
 * is read from the spec; a spec without one takes the `duration` param.
 */
function embeddedDuration(ctx: TaskContext): DurationSource {
  const fromSpec = ctx.spec?.duration;
  return { value: fromSpec !== undefined ? (fromSpec as ParamValue) : ctx.params.duration };
}

/** A Wait by ref takes exactly one param, `duration`, else the remote definition's default. */
function referencedDuration(ctx: TaskContext, ref: RefOutcome): DurationSource {
  const given = ctx.view.params;
  const unexpected = given.map((p) => p.name).filter((n) => n !== "duration");
  if (unexpected.length)
    return { step: invalid("UnexpectedParams", `Found unexpected params: [${listed(unexpected)}]`) };
  return {
    value:
      given.find((p) => p.name === "duration")?.value ??
      (ref.state === "resolved" ? declaredDefault(ref.object) : undefined),
  };
}

export class WaitTask implements CustomTask {
  readonly group = WAIT_GROUP;
  readonly kind = WAIT_KIND;

  async reconcile(ctx: TaskContext): Promise<Step> {
    const ref = await ctx.resolvedRef();
    const blocked = definitionStep(ref);
    if (blocked) return blocked;

    const source = ctx.spec ? embeddedDuration(ctx) : referencedDuration(ctx, ref);
    if ("step" in source) return source.step;
    const duration = parseWaitDuration(source.value);
    if ("type" in duration) return duration;

    const elapsed = ctx.now - ctx.startedAt;
    if (elapsed >= duration.ms) {
      return {
        type: "succeeded",
        reason: "DurationElapsed",
        message: "The wait duration has elapsed",
        results: [{ name: "waited", value: formatDuration(duration.ms) }],
      };
    }
    return {
      type: "running",
      message: "Waiting for duration to elapse",
      requeueAfterMs: duration.ms - elapsed,
    };
  }
}
