// Param resolution and $(params…) substitution for specs Quarry itself runs.
// Pure functions: no I/O, inputs are never mutated.
//
// resolveParams(declared, given) checks the given params against the
// declarations and applies defaults. substitute(spec, values) then replaces
// references in every string of a JSON-like value:
//
//   $(params.name)  $(params["name"])  $(params['name'])   string param, anywhere in a string
//   $(params.name.key)                                     member of an object param, anywhere
//   $(params.name[i])                                      element i of an array param, anywhere
//   $(params.name[*])  (or bare $(params.name))            an array param, only as a whole array
//                                                          element; it expands into the elements
//
// The key and index suffixes also follow the bracket forms. Object keys of the
// spec are not substituted, only string values. Text such as $(context.x) or
// $(tasks.t.results.r) that is not a param reference is left alone.
//
// Each string is read once, left to right, and inserted values are never read
// again: a value that itself contains "$(params.a)" is inserted as-is. So there
// is no recursive expansion and a self-referencing value cannot loop.
//
// Unlike Tekton's TaskRun, a given param that is not declared is an error
// (UnknownParam), and so is a reference to an undeclared param
// (InvalidParamReference) rather than being left in place.
import { QuarryReason } from "./reasons.ts";
import { MAX_PARAMS } from "./schemas.ts";
import type { Param, ParamValue } from "./types.ts";

// Caps. At most MAX_PARAMS (schemas.ts, the bound the CRDs put on spec.params)
// params may be declared, and at most as many given; the count is checked
// before anything else, so an oversized list fails at once.
/** At most this many elements in an array value, or keys in an object value. */
export const MAX_PARAM_ELEMENTS = 1024;
/** At most this many characters (UTF-16 units) in one value: a string, an array's elements, or an object's keys and values. */
export const MAX_PARAM_VALUE_CHARS = 64 * 1024;
/** At most this many characters across all resolved values together. */
export const MAX_PARAMS_TOTAL_CHARS = 1024 * 1024;
/** substitute() inserts at most this many characters in total (a large value referenced many times). */
export const MAX_SUBSTITUTED_CHARS = 4 * 1024 * 1024;
/** substitute() walks specs nested at most this deep. */
export const MAX_SPEC_DEPTH = 256;

export type DeclaredParamType = "string" | "array" | "object";

/** A param a spec declares (the shape of Tekton's ParamSpec that Quarry uses). */
export interface ParamDeclaration {
  name: string;
  /** When absent: the default's shape, else "object" if properties are given, else "string". */
  type?: DeclaredParamType;
  default?: ParamValue;
  /** Keys an object param must have (after merging a given object over an object default). */
  properties?: Record<string, { type: "string" }>;
  description?: string;
}

/** Resolved values by param name, in declaration order; every declared param has one. */
export type ResolvedParams = ReadonlyMap<string, ParamValue>;

export type ParamReason =
  | typeof QuarryReason.UnknownParam
  | typeof QuarryReason.MissingParam
  | typeof QuarryReason.DuplicateParam
  | typeof QuarryReason.InvalidParamType
  | typeof QuarryReason.ParamsTooLarge
  | typeof QuarryReason.InvalidParamReference
  | typeof QuarryReason.InvalidRequest;

export interface ParamFailure {
  ok: false;
  reason: ParamReason;
  message: string;
}

export type ResolveParamsResult = { ok: true; values: ResolvedParams } | ParamFailure;

/** A JSON value as parsed from an object's spec. */
export type JsonLike = string | number | boolean | null | JsonLike[] | { [key: string]: JsonLike };

export type SubstituteResult = { ok: true; value: JsonLike } | ParamFailure;

function fail(reason: ParamReason, message: string): ParamFailure {
  return { ok: false, reason, message };
}

/** A name or reference for a message: JSON-quoted, cut to a readable length. */
function q(s: string): string {
  return JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}…` : s);
}

function list(names: readonly string[]): string {
  const shown = names.slice(0, 10).map(q).join(", ");
  return names.length > 10 ? `${shown} and ${names.length - 10} more` : shown;
}

type Measured = { type: DeclaredParamType; chars: number } | { error: string } | undefined;

/** Type and size of a ParamValue; undefined if it is not one. Stops early at the caps. */
function measure(value: unknown): Measured {
  if (typeof value === "string") return { type: "string", chars: value.length };
  if (Array.isArray(value)) {
    if (value.length > MAX_PARAM_ELEMENTS)
      return { error: `has ${value.length} elements; at most ${MAX_PARAM_ELEMENTS} are allowed` };
    let chars = 0;
    for (const v of value) {
      if (typeof v !== "string") return undefined;
      chars += v.length;
    }
    return { type: "array", chars };
  }
  if (value === null || typeof value !== "object") return undefined;
  const entries = Object.entries(value);
  if (entries.length > MAX_PARAM_ELEMENTS)
    return { error: `has ${entries.length} keys; at most ${MAX_PARAM_ELEMENTS} are allowed` };
  let chars = 0;
  for (const [k, v] of entries) {
    if (typeof v !== "string") return undefined;
    chars += k.length + v.length;
  }
  return { type: "object", chars };
}

const TYPES: ReadonlySet<string> = new Set(["string", "array", "object"]);

/**
 * Checks given params against declared ones and applies defaults. Fails on the
 * first problem: too many params (checked before anything else), duplicate or
 * undeclared names, values of the wrong type or over the size caps, object
 * values missing a declared key, or declared params with no default left unset.
 */
export function resolveParams(
  declared: readonly ParamDeclaration[] | undefined,
  given: readonly Param[] | undefined,
): ResolveParamsResult {
  const decls = declared ?? [];
  const params = given ?? [];
  if (decls.length > MAX_PARAMS)
    return fail(
      QuarryReason.ParamsTooLarge,
      `${decls.length} params are declared; at most ${MAX_PARAMS} are allowed`,
    );
  if (params.length > MAX_PARAMS)
    return fail(
      QuarryReason.ParamsTooLarge,
      `${params.length} params are given; at most ${MAX_PARAMS} are allowed`,
    );

  // Declarations: names, types, defaults.
  const types = new Map<string, DeclaredParamType>();
  for (const d of decls) {
    if (typeof d?.name !== "string" || d.name === "")
      return fail(QuarryReason.InvalidParamType, "a declared param has no name");
    const name = d.name;
    if (types.has(name))
      return fail(QuarryReason.DuplicateParam, `param ${q(name)} is declared more than once`);
    if (d.type !== undefined && !TYPES.has(d.type))
      return fail(
        QuarryReason.InvalidParamType,
        `param ${q(name)} declares type ${q(String(d.type))}; use "string", "array" or "object"`,
      );
    let type = d.type;
    if (d.default !== undefined) {
      const m = measure(d.default);
      if (m === undefined)
        return fail(
          QuarryReason.InvalidParamType,
          `default of param ${q(name)} is not a string, an array of strings or an object of strings`,
        );
      if ("error" in m) return fail(QuarryReason.ParamsTooLarge, `default of param ${q(name)} ${m.error}`);
      if (m.chars > MAX_PARAM_VALUE_CHARS)
        return fail(
          QuarryReason.ParamsTooLarge,
          `default of param ${q(name)} has ${m.chars} characters; at most ${MAX_PARAM_VALUE_CHARS} are allowed`,
        );
      if (type !== undefined && m.type !== type)
        return fail(
          QuarryReason.InvalidParamType,
          `default of param ${q(name)} is ${article(m.type)}, but the param is declared ${type}`,
        );
      type = m.type;
    }
    type ??= d.properties !== undefined ? "object" : "string";
    if (d.properties !== undefined) {
      if (type !== "object")
        return fail(
          QuarryReason.InvalidParamType,
          `param ${q(name)} declares properties, but only object params have them`,
        );
      for (const [key, prop] of Object.entries(d.properties))
        if (prop?.type !== "string")
          return fail(
            QuarryReason.InvalidParamType,
            `property ${q(key)} of param ${q(name)} must have type "string"`,
          );
    }
    types.set(name, type);
  }

  // Given values.
  const givenValues = new Map<string, ParamValue>();
  for (const p of params) {
    if (typeof p?.name !== "string") return fail(QuarryReason.InvalidParamType, "a given param has no name");
    const name = p.name;
    const type = types.get(name);
    if (type === undefined) {
      const declaredNames = [...types.keys()];
      return fail(
        QuarryReason.UnknownParam,
        `param ${q(name)} is not declared` +
          (declaredNames.length > 0 ? ` (declared: ${list(declaredNames)})` : " (no params are declared)"),
      );
    }
    if (givenValues.has(name))
      return fail(QuarryReason.DuplicateParam, `param ${q(name)} is given more than once`);
    const m = measure(p.value);
    if (m === undefined)
      return fail(
        QuarryReason.InvalidParamType,
        `param ${q(name)} is not a string, an array of strings or an object of strings`,
      );
    if ("error" in m) return fail(QuarryReason.ParamsTooLarge, `param ${q(name)} ${m.error}`);
    if (m.chars > MAX_PARAM_VALUE_CHARS)
      return fail(
        QuarryReason.ParamsTooLarge,
        `param ${q(name)} has ${m.chars} characters; at most ${MAX_PARAM_VALUE_CHARS} are allowed`,
      );
    if (m.type !== type)
      return fail(
        QuarryReason.InvalidParamType,
        `param ${q(name)} is declared ${type}, but was given ${article(m.type)}`,
      );
    givenValues.set(name, p.value);
  }

  // Defaults, object keys, missing params, total size.
  const entries: [string, ParamValue][] = [];
  const missing: string[] = [];
  let total = 0;
  for (const d of decls) {
    let value = givenValues.get(d.name);
    if (value === undefined) value = d.default;
    else if (types.get(d.name) === "object" && isStringRecord(d.default) && isStringRecord(value))
      value = { ...d.default, ...value }; // a given object fills in over the default's keys
    if (value === undefined) {
      missing.push(d.name);
      continue;
    }
    if (d.properties !== undefined && isStringRecord(value)) {
      const record = value;
      const lacking = Object.keys(d.properties).filter((k) => !Object.hasOwn(record, k));
      if (lacking.length > 0)
        return fail(
          QuarryReason.InvalidParamType,
          `param ${q(d.name)} lacks key${lacking.length > 1 ? "s" : ""} ${list(lacking)} declared in its properties`,
        );
    }
    const m = measure(value);
    if (m === undefined || "error" in m || m.chars > MAX_PARAM_VALUE_CHARS)
      // only a given object merged over an object default can get here
      return fail(
        QuarryReason.ParamsTooLarge,
        `param ${q(d.name)} merged over its default is larger than one value may be`,
      );
    total += m.chars;
    entries.push([d.name, value]);
  }
  if (missing.length > 0)
    return fail(
      QuarryReason.MissingParam,
      missing.length === 1
        ? `param ${q(missing[0]!)} has no default and was not given`
        : `params ${list(missing)} have no default and were not given`,
    );
  if (total > MAX_PARAMS_TOTAL_CHARS)
    return fail(
      QuarryReason.ParamsTooLarge,
      `param values have ${total} characters together; at most ${MAX_PARAMS_TOTAL_CHARS} are allowed`,
    );
  return { ok: true, values: new Map(entries) };
}

function article(type: DeclaredParamType): string {
  return type === "array" ? "an array" : type === "object" ? "an object" : "a string";
}

function isStringRecord(v: unknown): v is Record<string, string> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

// ---- references ----

const OPEN = "$(params";

interface Ref {
  /** The reference as written, "$(params.x[*])". */
  text: string;
  name: string;
  key?: string;
  /** "*" for [*], a number for [i]. */
  index?: number | "*";
}

type Parsed = Ref | { malformed: string } | undefined;

/**
 * Reads a reference at s[start] (which begins with "$(params"). undefined when
 * it is not a param reference at all ("$(params)", "$(paramsx…)").
 */
function parseRef(s: string, start: number): Parsed {
  let i = start + OPEN.length;
  const malformed = (): Parsed => {
    const close = s.indexOf(")", i);
    return { malformed: s.slice(start, close === -1 ? s.length : close + 1) };
  };
  let name: string;
  if (s[i] === ".") {
    const end = wordEnd(s, i + 1);
    name = s.slice(i + 1, end);
    i = end;
  } else if (s[i] === "[") {
    const quote = s[i + 1];
    if (quote !== '"' && quote !== "'") return malformed();
    const end = s.indexOf(quote, i + 2);
    if (end === -1 || s[end + 1] !== "]") return malformed();
    name = s.slice(i + 2, end);
    i = end + 2;
  } else return undefined;
  if (name === "") return malformed();
  const ref: Ref = { text: "", name };
  if (s[i] === ".") {
    const end = wordEnd(s, i + 1);
    if (end === i + 1) return malformed();
    ref.key = s.slice(i + 1, end);
    i = end;
  }
  if (s[i] === "[") {
    const close = s.indexOf("]", i);
    const inner = close === -1 ? "" : s.slice(i + 1, close);
    if (inner === "*") ref.index = "*";
    else if (/^[0-9]{1,9}$/.test(inner)) ref.index = Number(inner);
    else return malformed();
    i = close + 1;
  }
  if (s[i] !== ")") return malformed();
  ref.text = s.slice(start, i + 1);
  return ref;
}

/** End of a dot-form name or key: the next ".", "[", ")" or the end of s. */
function wordEnd(s: string, from: number): number {
  let i = from;
  while (i < s.length && s[i] !== "." && s[i] !== "[" && s[i] !== ")") i++;
  return i;
}

interface Walk {
  values: ResolvedParams;
  inserted: number;
}

/** What a reference stands for: a string to insert, or a whole array. */
function lookup(ref: Ref, w: Walk): { str: string } | { array: readonly string[] } | ParamFailure {
  const value = w.values.get(ref.name);
  const at = `reference ${q(ref.text)}`;
  if (value === undefined)
    return fail(
      QuarryReason.InvalidParamReference,
      `${at} names param ${q(ref.name)}, which is not declared`,
    );
  if (typeof value === "string") {
    if (ref.key !== undefined || ref.index !== undefined)
      return fail(
        QuarryReason.InvalidParamReference,
        `${at}: param ${q(ref.name)} is a string; it has no ${ref.key !== undefined ? "keys" : "elements"}`,
      );
    return { str: value };
  }
  if (Array.isArray(value)) {
    if (ref.key !== undefined)
      return fail(
        QuarryReason.InvalidParamReference,
        `${at}: param ${q(ref.name)} is an array; it has no keys`,
      );
    if (typeof ref.index === "number") {
      const v = value[ref.index];
      if (v === undefined)
        return fail(
          QuarryReason.InvalidParamReference,
          `${at}: param ${q(ref.name)} has ${value.length} element${value.length === 1 ? "" : "s"}`,
        );
      return { str: v };
    }
    return { array: value };
  }
  const record = value as Record<string, string>;
  if (ref.key === undefined || ref.index !== undefined)
    return fail(
      QuarryReason.InvalidParamReference,
      `${at}: param ${q(ref.name)} is an object; use one of its keys, as in $(params.${ref.name}.key)`,
    );
  if (!Object.hasOwn(record, ref.key))
    return fail(QuarryReason.InvalidParamReference, `${at}: param ${q(ref.name)} has no key ${q(ref.key)}`);
  return { str: record[ref.key]! };
}

function charge(w: Walk, chars: number): ParamFailure | undefined {
  w.inserted += chars;
  if (w.inserted > MAX_SUBSTITUTED_CHARS)
    return fail(
      QuarryReason.ParamsTooLarge,
      `substitution would insert more than ${MAX_SUBSTITUTED_CHARS} characters`,
    );
  return undefined;
}

/** Substitutes every reference in s, once, left to right. */
function substituteString(s: string, w: Walk): { ok: true; value: string } | ParamFailure {
  let from = s.indexOf(OPEN);
  if (from === -1) return { ok: true, value: s };
  let out = "";
  let copied = 0; // s[copied, from) is still to be copied
  while (from !== -1) {
    const ref = parseRef(s, from);
    if (ref === undefined) {
      from = s.indexOf(OPEN, from + OPEN.length);
      continue;
    }
    if ("malformed" in ref)
      return fail(QuarryReason.InvalidParamReference, `malformed param reference ${q(ref.malformed)}`);
    const found = lookup(ref, w);
    if ("ok" in found) return found;
    if ("array" in found)
      return fail(
        QuarryReason.InvalidParamReference,
        `reference ${q(ref.text)}: param ${q(ref.name)} is an array; a whole array can only stand alone as an array element`,
      );
    const over = charge(w, found.str.length);
    if (over) return over;
    out += s.slice(copied, from) + found.str;
    copied = from + ref.text.length;
    from = s.indexOf(OPEN, copied);
  }
  return { ok: true, value: out + s.slice(copied) };
}

/**
 * Replaces $(params…) references in every string of value with the resolved
 * values (see the top of this file). Fails with InvalidParamReference on a
 * malformed reference, an undeclared param, or a param used where its type is
 * not allowed; with ParamsTooLarge past MAX_SUBSTITUTED_CHARS; with
 * InvalidRequest past MAX_SPEC_DEPTH. Unchanged parts of value may be shared
 * with the result.
 */
export function substitute(value: JsonLike, values: ResolvedParams): SubstituteResult {
  const w: Walk = { values, inserted: 0 };
  return walk(value, w, 0);
}

function walk(value: JsonLike, w: Walk, depth: number): SubstituteResult {
  if (typeof value === "string") return substituteString(value, w);
  if (value === null || typeof value !== "object") return { ok: true, value };
  if (depth >= MAX_SPEC_DEPTH)
    return fail(QuarryReason.InvalidRequest, `the spec nests deeper than ${MAX_SPEC_DEPTH} levels`);
  if (Array.isArray(value)) {
    const out: JsonLike[] = [];
    let changed = false;
    for (const element of value) {
      const whole = typeof element === "string" ? wholeArray(element, w) : undefined;
      if (whole !== undefined) {
        if ("ok" in whole) return whole;
        const over = charge(
          w,
          whole.reduce((n, v) => n + v.length, 0),
        );
        if (over) return over;
        out.push(...whole);
        changed = true;
        continue;
      }
      const r = walk(element, w, depth + 1);
      if (!r.ok) return r;
      if (r.value !== element) changed = true;
      out.push(r.value);
    }
    return { ok: true, value: changed ? out : value };
  }
  const entries: [string, JsonLike][] = [];
  let changed = false;
  for (const [k, v] of Object.entries(value)) {
    const r = walk(v, w, depth + 1);
    if (!r.ok) return r;
    if (r.value !== v) changed = true;
    entries.push([k, r.value]);
  }
  // fromEntries defines own properties, so a "__proto__" key stays a plain key.
  return { ok: true, value: changed ? Object.fromEntries(entries) : value };
}

/**
 * An array element that is exactly one whole-array reference: the elements to
 * splice in. A failure for [*] of a non-array; undefined for anything else.
 */
function wholeArray(element: string, w: Walk): readonly string[] | ParamFailure | undefined {
  if (!element.startsWith(OPEN)) return undefined;
  const ref = parseRef(element, 0);
  if (ref === undefined || "malformed" in ref || ref.text.length !== element.length) return undefined;
  if (ref.key !== undefined || typeof ref.index === "number") return undefined;
  const value = w.values.get(ref.name);
  if (Array.isArray(value)) return value;
  if (ref.index === "*" && value !== undefined)
    return fail(
      QuarryReason.InvalidParamReference,
      `reference ${q(ref.text)}: [*] needs an array, but param ${q(ref.name)} is ${typeof value === "string" ? "a string" : "an object"}`,
    );
  return undefined; // substituteString reports it (or substitutes a bare string ref)
}
