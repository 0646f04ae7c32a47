// What a `revision` param names, and which advertised ref it picks. Pure:
// the git engines call these, the tests table them.

/** A full commit id pins content; anything else is a ref name resolved against the remote. */
export type Revision =
  | { kind: "commit"; sha: string; format: "sha1" | "sha256" }
  | { kind: "ref"; name: string };

export interface ServerRef {
  ref: string;
  oid: string;
  /** For an annotated tag: the commit it points to. */
  peeled?: string;
}

const FULL_SHA1 = /^[0-9a-fA-F]{40}$/;
const FULL_SHA256 = /^[0-9a-fA-F]{64}$/;

/**
 * Classifies a revision, or returns why it is refused. Names follow
 * git-check-ref-format, and never start with "-" (they reach git's argv).
 */
export function classifyRevision(raw: string): Revision | { error: string } {
  if (raw === "") return { error: "must not be empty" };
  if (raw.startsWith("-")) return { error: `must not start with "-" (got ${JSON.stringify(raw)})` };
  if (FULL_SHA1.test(raw)) return { kind: "commit", sha: raw.toLowerCase(), format: "sha1" };
  if (FULL_SHA256.test(raw)) return { kind: "commit", sha: raw.toLowerCase(), format: "sha256" };
  const bad = badRefName(raw);
  if (bad) return { error: `${JSON.stringify(raw)} is not a valid branch, tag or ref name: ${bad}` };
  return { kind: "ref", name: raw };
}

function badRefName(name: string): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u0020\u007f]/.test(name)) return "contains whitespace or control characters";
  if (/[~^:?*[\\]/.test(name)) return "contains one of ~ ^ : ? * [ \\";
  if (name.includes("..")) return 'contains ".."';
  if (name.includes("@{") || name === "@") return 'contains "@{"';
  if (name.includes("//") || name.startsWith("/") || name.endsWith("/")) return "has an empty path component";
  if (name.endsWith(".") || name.endsWith(".lock")) return 'ends with "." or ".lock"';
  if (name.split("/").some((c) => c.startsWith("."))) return 'has a component starting with "."';
  return undefined;
}

/**
 * The full ref names a short name may mean, in git's order of precedence
 * (refs.c ref_rev_parse_rules, without remotes): `HEAD` and `refs/...` are
 * taken as given; otherwise refs/<n>, then refs/tags/<n>, then
 * refs/heads/<n>, so a tag wins over a branch of the same name, as in git.
 */
export function refCandidates(name: string): string[] {
  if (name === "HEAD" || name.startsWith("refs/")) return [name];
  const out = [`refs/tags/${name}`, `refs/heads/${name}`];
  // refs/<n> can only exist for names with a slash (heads/x, pull/1/head, ...)
  return name.includes("/") ? [`refs/${name}`, ...out] : out;
}

/** The commit a revision names among advertised refs (annotated tags peeled), or undefined. */
export function pickRef(
  refs: readonly ServerRef[],
  name: string,
): { ref: string; commit: string } | undefined {
  const byName = new Map(refs.map((r) => [r.ref, r]));
  for (const candidate of refCandidates(name)) {
    const hit = byName.get(candidate);
    if (hit) return { ref: candidate, commit: hit.peeled ?? hit.oid };
  }
  return undefined;
}

/** The object format a full commit id implies. */
export function formatOf(commit: string): "sha1" | "sha256" {
  return commit.length === 64 ? "sha256" : "sha1";
}
