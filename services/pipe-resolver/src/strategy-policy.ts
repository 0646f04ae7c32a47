// What a strategy's author (and a Pipe's) lets a request do, decided from the
// checked objects before any pod is made. Each refusal is Forbidden, with a
// message that names the field that decided it:
//
//   a ClusterPipeStrategy from a namespace its spec.allowedNamespaces does not
//   name (none when unset: a cluster-wide pod template is opt-in per namespace)
//   a request's own files (params strategy + files) where the strategy's
//   spec.allowInlineFiles is not true
//   an output stored as a ConfigMap that the strategy's spec.outputs does not
//   declare ConfigMap: a file is a Secret unless its author says it is not,
//   so neither a Pipe nor a request can turn a private key into a ConfigMap
//   a request's value for a param its Pipe marks fixed
import { CLUSTER_PIPE_STRATEGY_KIND, type Param, type ParamValue, QuarryReason } from "@quarry/api";
import type { CheckedPipe, CheckedStrategy, PipeFailure } from "./validate.ts";

const q = (s: string) => JSON.stringify(s);

function forbidden(message: string): PipeFailure {
  return { ok: false, reason: QuarryReason.Forbidden, message };
}

/** True when `pattern` (a name, or a glob where `*` is any run of characters) matches `namespace`. */
export function namespaceMatches(pattern: string, namespace: string): boolean {
  const parts = pattern.split("*");
  if (parts.length === 1) return pattern === namespace;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (namespace.length < first.length + last.length) return false;
  if (!namespace.startsWith(first) || !namespace.endsWith(last)) return false;
  // the middle parts in order, each after the previous, within what first and last leave
  let at = first.length;
  const end = namespace.length - last.length;
  for (const part of parts.slice(1, -1)) {
    const found = namespace.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}

/** A ClusterPipeStrategy is usable only from the namespaces it names; a PipeStrategy only in its own (the lookup's). */
export function checkNamespace(strategy: CheckedStrategy, namespace: string): PipeFailure | undefined {
  if (strategy.kind !== CLUSTER_PIPE_STRATEGY_KIND) return undefined;
  const allowed = strategy.allowedNamespaces ?? [];
  if (allowed.some((p) => namespaceMatches(p, namespace))) return undefined;
  return forbidden(
    `${strategy.kind} ${q(strategy.name)} may not be used from namespace ${q(namespace)}: its spec.allowedNamespaces ${
      allowed.length === 0
        ? "is empty (no namespace may use it until its author names some)"
        : "does not match it"
    }`,
  );
}

/** A request's own files only where the strategy allows them. */
export function checkInlineFiles(strategy: CheckedStrategy): PipeFailure | undefined {
  if (strategy.allowInlineFiles) return undefined;
  return forbidden(
    `param "files": ${strategy.kind} ${q(strategy.name)} does not allow a request to name its own files (its spec.allowInlineFiles is not true); use a Pipe that names the strategy`,
  );
}

/**
 * Every entry stored as a ConfigMap must be a file the strategy declares ConfigMap. A Secret is
 * always allowed: it is the more private of the two. `field` and `subject` as for checkFiles.
 */
export function checkOutputKinds(
  pipe: CheckedPipe,
  strategy: CheckedStrategy,
  field: string,
  subject: string,
): PipeFailure | undefined {
  for (const [i, e] of pipe.entries.entries()) {
    if (e.kind !== "ConfigMap") continue;
    const path = e.file ?? e.envFile ?? "";
    const declared = strategy.outputs.get(path);
    if (declared?.kind === "ConfigMap") continue;
    const by = `${strategy.kind} ${q(strategy.name)}`;
    const why = declared
      ? `${by} declares ${q(path)} a Secret (spec.outputs[${declared.index}])`
      : `${by} does not declare ${q(path)} a ConfigMap output (spec.outputs)`;
    return forbidden(
      `${subject}: ${field}[${i}].kind is ConfigMap, but ${why}: it may be stored only as a Secret`,
    );
  }
  return undefined;
}

function sameValue(a: ParamValue, b: ParamValue): boolean {
  if (typeof a === "string" || typeof b === "string") return a === b;
  if (Array.isArray(a) || Array.isArray(b))
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => v === b[i]);
  const ak = Object.keys(a);
  return ak.length === Object.keys(b).length && ak.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}

/**
 * A request may not give a param its Pipe fixes another value (the same value is no override and
 * passes, so a Run that always passes it keeps working).
 */
export function checkFixedParams(
  pipe: CheckedPipe,
  requestParams: readonly Param[],
  subject: string,
): PipeFailure | undefined {
  for (const p of requestParams) {
    const index = pipe.fixed.get(p.name);
    if (index === undefined) continue;
    const own = pipe.params.find((x) => x.name === p.name);
    if (own && sameValue(own.value, p.value)) continue;
    return forbidden(
      `param ${q(p.name)} is fixed by ${subject} (spec.params[${index}].fixed); a request may not give it another value`,
    );
  }
  return undefined;
}
