// Label and field selectors as the apiserver evaluates them, for the fake
// client: equality (`a=b`, `a==b`, `a!=b`), sets (`a in (x,y)`,
// `a notin (x,y)`) and existence (`a`, `!a`); fields only metadata.name and
// metadata.namespace, which is all list/watch callers here use.
import type { ObjectMeta } from "@quarry/api";
import { ApiError } from "./errors.ts";

type Requirement = (labels: Record<string, string>) => boolean;

const KEY = "[A-Za-z0-9][-A-Za-z0-9_./]*";
const VALUE = "[-A-Za-z0-9_.]*";
const SET = new RegExp(String.raw`^(${KEY})\s+(in|notin)\s*\(([^)]*)\)$`);
const EQUALITY = new RegExp(String.raw`^(${KEY})\s*(==|=|!=)\s*(${VALUE})$`);
const EXISTS = new RegExp(String.raw`^(!?)\s*(${KEY})$`);

/** Commas inside `in (...)` belong to the set, not to the selector. */
function splitTopLevel(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "," && depth === 0) {
      parts.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(selector.slice(start));
  return parts.map((p) => p.trim()).filter(Boolean);
}

function invalid(selector: string): ApiError {
  return new ApiError(400, "BadRequest", `unable to parse requirement: "${selector}"`);
}

function parseRequirement(text: string): Requirement {
  const set = SET.exec(text);
  if (set) {
    const [, key = "", op, list = ""] = set;
    const values = new Set(list.split(",").map((v) => v.trim()));
    return op === "in"
      ? (l) => l[key] !== undefined && values.has(l[key])
      : (l) => l[key] === undefined || !values.has(l[key]);
  }
  const eq = EQUALITY.exec(text);
  if (eq) {
    const [, key = "", op, value] = eq;
    return op === "!=" ? (l) => l[key] !== value : (l) => l[key] === value;
  }
  const exists = EXISTS.exec(text);
  if (exists) {
    const [, not, key = ""] = exists;
    return not ? (l) => l[key] === undefined : (l) => l[key] !== undefined;
  }
  throw invalid(text);
}

/** A predicate over labels; throws a 400 ApiError for what it cannot parse. */
export function labelMatcher(
  selector: string | undefined,
): (labels: Record<string, string> | undefined) => boolean {
  const reqs = splitTopLevel(selector ?? "").map(parseRequirement);
  return (labels) => reqs.every((r) => r(labels ?? {}));
}

/** A predicate over metadata.name / metadata.namespace. */
export function fieldMatcher(selector: string | undefined): (meta: ObjectMeta) => boolean {
  const reqs = splitTopLevel(selector ?? "").map((text) => {
    const m = /^(metadata\.name|metadata\.namespace)\s*(==|=|!=)\s*(\S*)$/.exec(text);
    if (!m) throw new ApiError(400, "BadRequest", `field selector not supported: "${text}"`);
    const [, field, op, value] = m;
    const get = (meta: ObjectMeta) => (field === "metadata.name" ? meta.name : meta.namespace) ?? "";
    return op === "!="
      ? (meta: ObjectMeta) => get(meta) !== value
      : (meta: ObjectMeta) => get(meta) === value;
  });
  return (meta) => reqs.every((r) => r(meta));
}
