// Tekton's param list → the object a resolver sees, checked against the
// resolver's JSON Schema with ajv. Every message names the param at fault.
import type { Param, ParamValue } from "@quarry/api";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import type { Params, ParamsSchema } from "./resolver.ts";

export const CACHE_PARAM = "cache";
export type CacheMode = "always" | "never" | "auto";
const CACHE_MODES: readonly string[] = ["always", "never", "auto"];

export type ParamsResult =
  | { ok: true; params: Params; cacheMode?: CacheMode }
  | { ok: false; message: string };

/** Splits out the runtime's own `cache` param and rejects duplicates and bad values. */
export function paramsToObject(list: readonly Param[] | undefined): ParamsResult {
  const params: Params = {};
  let cacheMode: CacheMode | undefined;
  for (const p of list ?? []) {
    if (Object.hasOwn(params, p.name) || (p.name === CACHE_PARAM && cacheMode)) {
      return { ok: false, message: `param "${p.name}" is given more than once` };
    }
    if (p.name === CACHE_PARAM) {
      if (typeof p.value !== "string" || !CACHE_MODES.includes(p.value)) {
        return {
          ok: false,
          message: `param "cache" must be one of always, never, auto; got ${JSON.stringify(p.value)}`,
        };
      }
      cacheMode = p.value as CacheMode;
      continue;
    }
    params[p.name] = p.value as ParamValue;
  }
  return cacheMode ? { ok: true, params, cacheMode } : { ok: true, params };
}

export class ParamsValidator {
  private readonly validate: ValidateFunction;

  constructor(schema: ParamsSchema) {
    const ajv = new Ajv({ allErrors: true, strict: false });
    this.validate = ajv.compile(schema);
  }

  /** undefined when valid, else one message naming every offending param. */
  check(params: Params): string | undefined {
    if (this.validate(params)) return undefined;
    return describeErrors(this.validate.errors ?? []);
  }
}

function describeErrors(errors: readonly ErrorObject[]): string {
  const messages = errors.map((e) => {
    if (e.keyword === "required")
      return `param "${(e.params as { missingProperty: string }).missingProperty}" is required`;
    if (e.keyword === "additionalProperties") {
      return `param "${(e.params as { additionalProperty: string }).additionalProperty}" is not supported`;
    }
    const name = e.instancePath.split("/")[1] ?? "";
    return `param "${name}" ${e.message ?? "is invalid"}`;
  });
  return [...new Set(messages)].join("; ");
}
