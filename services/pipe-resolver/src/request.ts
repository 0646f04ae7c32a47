// A pipe request's params. Either
//
//   pipe: <name of a Pipe in the request's namespace>
//
// or, for a request that brings its own files,
//
//   strategy: <name>   strategyKind: PipeStrategy | ClusterPipeStrategy
//   files: a YAML (or JSON) list shaped like a Pipe's spec.pipe, e.g.
//          "[{file: /out/tls.key, kind: Secret, key: tls-key}]"
//
// plus values for the strategy's declared params, which override the Pipe's
// own values by name. (The resolver SDK has already taken out its `cache`
// param and refused duplicate names.)
import {
  CLUSTER_PIPE_STRATEGY_KIND,
  type Param,
  PIPE_STRATEGY_KIND,
  PIPE_STRATEGY_KINDS,
  type PipeStrategyKind,
  QuarryReason,
} from "@quarry/api";
import { load } from "js-yaml";
import { type CheckedPipe, checkParamValues, type PipeFailure, validatePipeEntries } from "./validate.ts";

/** A Kubernetes object name (DNS subdomain). */
const OBJECT_NAME = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export const PARAM_PIPE = "pipe";
export const PARAM_STRATEGY = "strategy";
export const PARAM_STRATEGY_KIND = "strategyKind";
export const PARAM_FILES = "files";
const OWN_PARAMS: readonly string[] = [PARAM_PIPE, PARAM_STRATEGY, PARAM_STRATEGY_KIND, PARAM_FILES];

/** What a request asks for: a Pipe by name, or a strategy and files of its own (checked). */
export type PipeSource = { pipe: string } | { inline: CheckedPipe };

export type RequestResult = { ok: true; source: PipeSource; params: Param[] } | PipeFailure;

const q = (s: string) => JSON.stringify(s);

function invalid(message: string): PipeFailure {
  return { ok: false, reason: QuarryReason.InvalidParams, message };
}

/**
 * Splits a request's params into what it asks for and the strategy param values. Malformed own
 * params fail InvalidParams naming the param; malformed files fail InvalidPipe naming the entry.
 */
export function readRequest(params: readonly Param[] | undefined): RequestResult {
  const own = new Map<string, Param["value"]>();
  const rest: Param[] = [];
  for (const p of params ?? []) {
    if (OWN_PARAMS.includes(p.name)) own.set(p.name, p.value);
    else rest.push(p);
  }
  const checked = checkParamValues(rest, "params");
  if (!Array.isArray(checked)) return checked;

  const str = (name: string): string | PipeFailure | undefined => {
    const v = own.get(name);
    if (v === undefined) return undefined;
    if (typeof v !== "string" || v.trim() === "")
      return invalid(`param ${q(name)} must be a non-empty string`);
    return v.trim();
  };
  const pipe = str(PARAM_PIPE);
  const strategy = str(PARAM_STRATEGY);
  const strategyKind = str(PARAM_STRATEGY_KIND);
  for (const v of [pipe, strategy, strategyKind]) if (typeof v === "object") return v;
  // an object name goes into an API path: "../x" there is a 403 for another resource, which
  // retried as if the apiserver were down; refused here, at once
  for (const [name, v] of [
    [PARAM_PIPE, pipe],
    [PARAM_STRATEGY, strategy],
  ] as const)
    if (typeof v === "string" && !OBJECT_NAME.test(v))
      return invalid(`param ${q(name)}: ${q(v.slice(0, 300))} is not a valid object name`);
  const inlineGiven = OWN_PARAMS.filter((n) => n !== PARAM_PIPE && own.has(n));

  if (pipe !== undefined) {
    if (inlineGiven.length > 0)
      return invalid(
        `param "pipe" names a Pipe, which brings its own strategy and files; do not also give ${inlineGiven.map(q).join(", ")}`,
      );
    return { ok: true, source: { pipe: pipe as string }, params: checked };
  }
  if (inlineGiven.length === 0)
    return invalid(
      `a pipe request needs param "pipe" (the name of a Pipe), or params "strategy", "strategyKind" and "files"`,
    );
  const missing = [PARAM_STRATEGY, PARAM_STRATEGY_KIND, PARAM_FILES].filter((n) => !own.has(n));
  if (missing.length > 0)
    return invalid(
      `a pipe request without a Pipe needs params "strategy", "strategyKind" and "files"; ${missing.map(q).join(", ")} ${missing.length === 1 ? "is" : "are"} missing`,
    );
  if (!PIPE_STRATEGY_KINDS.includes(strategyKind as PipeStrategyKind))
    return invalid(
      `param "strategyKind" is ${q(String(strategyKind))}; use ${PIPE_STRATEGY_KIND} or ${CLUSTER_PIPE_STRATEGY_KIND}`,
    );
  const files = own.get(PARAM_FILES);
  if (typeof files !== "string")
    return invalid(`param "files" must be a string: a YAML or JSON list of {file | envFile, kind, key}`);
  let parsed: unknown;
  try {
    parsed = load(files);
  } catch (err) {
    const reason = err instanceof Error ? err.message.split("\n")[0] : String(err);
    return invalid(`param "files" is not YAML: ${reason}`);
  }
  const entries = validatePipeEntries(parsed, 'param "files"');
  if (!entries.ok) return entries;
  return {
    ok: true,
    source: {
      inline: {
        name: strategy as string,
        strategy: { kind: strategyKind as PipeStrategyKind, name: strategy as string },
        params: [],
        fixed: new Map(),
        entries: entries.entries,
      },
    },
    params: checked,
  };
}

/** The Pipe's param values with the request's over them (by name); the Pipe's order, then the request's new ones. */
export function mergeParams(pipeParams: readonly Param[], requestParams: readonly Param[]): Param[] {
  const given = new Map(requestParams.map((p) => [p.name, p]));
  const merged = pipeParams.map((p) => given.get(p.name) ?? p);
  const known = new Set(pipeParams.map((p) => p.name));
  return [...merged, ...requestParams.filter((p) => !known.has(p.name))];
}
