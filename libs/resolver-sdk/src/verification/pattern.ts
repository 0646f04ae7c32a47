// A verification policy's resource pattern: Go's regular-expression syntax
// (RE2, as Tekton's VerificationPolicy uses), matched against the WHOLE
// source URI. Tekton matched patterns anywhere in the URI, so a pattern for
// one repository also matched a longer URI that contained it
// (GHSA-rmx9-2pp3-xhcr); here a pattern must match from the first character
// to the last. RE2 runs in linear time, so a hostile pattern cannot stall a
// resolver the way a backtracking engine can.

/**
 * The string a pattern is matched against, as Tekton has matched it since that fix: the refSource
 * URI trimmed, without the git resolver's `git+` prefix (so one pattern serves a repository's
 * https URL whichever resolver reports it).
 */
export function normalizeSource(uri: string): string {
  const trimmed = uri.trim();
  return trimmed.startsWith("git+") ? trimmed.slice(4) : trimmed;
}

/** Longest pattern accepted: a policy is a handful of URIs, not a program. */
export const MAX_PATTERN_LENGTH = 1024;

/** URIs no real policy covers all of: a pattern matching each of them matches everything. */
const PROBES = ["", "quarry-probe", "git+https://quarry.invalid/probe.git", "oci://quarry.invalid/probe:1"];

export interface SourcePattern {
  readonly source: string;
  /** The pattern matches the whole of `uri`. */
  matches(uri: string): boolean;
  /** It matches the empty string and every probe URI: it would apply to every source. */
  readonly matchesEverything: boolean;
}

export type CompiledPattern = { ok: true; pattern: SourcePattern } | { ok: false; message: string };

type Re2 = typeof import("re2js");
let engine: Promise<Re2> | undefined;

/** re2js is loaded on first use: a process with no policy never loads it. */
function re2(): Promise<Re2> {
  engine ??= import("re2js");
  return engine;
}

export async function compilePattern(source: string): Promise<CompiledPattern> {
  if (source.length === 0) return { ok: false, message: "the pattern is empty" };
  if (source.length > MAX_PATTERN_LENGTH)
    return { ok: false, message: `the pattern is ${source.length} characters, over ${MAX_PATTERN_LENGTH}` };
  const { RE2JS } = await re2();
  let compiled: ReturnType<typeof RE2JS.compile>;
  try {
    compiled = RE2JS.compile(source);
  } catch (err) {
    return { ok: false, message: `the pattern is not a regular expression: ${(err as Error).message}` };
  }
  const matches = (uri: string) => compiled.matches(uri);
  return {
    ok: true,
    pattern: { source, matches, matchesEverything: PROBES.every(matches) },
  };
}
