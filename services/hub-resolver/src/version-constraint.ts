// Version constraints as Tekton's hub resolver reads its `version` param:
// hashicorp/go-version's grammar and ordering, so a constraint picks the same
// version here as in Tekton. Pure; table-tested in version-constraint.test.ts.
//
// go-version's rules, which npm's `semver` does not share:
// - a version is 1+ dot-separated numbers ("0.1", "1", "1.2.3.4"), an optional
//   leading `v`, an optional pre-release (`-rc.1`, or `1.2beta` with no dash)
//   and build metadata (`+meta`); missing segments count as 0;
// - a constraint is a comma-separated list (AND) of `op version`, op one of
//   `=` (or none), `!=`, `>`, `<`, `>=`, `<=`, `~>`;
// - a pre-release version satisfies no range unless the constraint itself
//   names a pre-release of the same segments; `=` and `!=` compare exactly;
// - `~>` (pessimistic): at least the version, and the same leading segments
//   except the last one written (`~> 1.2` is >= 1.2, < 2; `~> 1.2.3` is
//   >= 1.2.3, < 1.3).

/** A parsed version: segments padded to at least three, as go-version pads them. */
export interface Version {
  readonly segments: readonly bigint[];
  /** How many segments were written (go-version's `si`), which `~>` reads. */
  readonly written: number;
  readonly prerelease: string;
  readonly metadata: string;
}

export type Operator = "=" | "!=" | ">" | "<" | ">=" | "<=" | "~>";

export interface Constraint {
  readonly op: Operator;
  readonly version: Version;
  readonly text: string;
}

// go-version's VersionRegexpRaw, in JavaScript's (equally leftmost-first) syntax
const VERSION =
  "v?([0-9]+(\\.[0-9]+)*?)" +
  "(-([0-9]+[0-9A-Za-z\\-~]*(\\.[0-9A-Za-z\\-~]+)*)|(-?([A-Za-z\\-~]+[0-9A-Za-z\\-~]*(\\.[0-9A-Za-z\\-~]+)*)))?" +
  "(\\+([0-9A-Za-z\\-~]+(\\.[0-9A-Za-z\\-~]+)*))?" +
  "?";
const VERSION_RE = new RegExp(`^${VERSION}$`);
// Go's \s is ASCII white space only; JavaScript's would also take Unicode spaces
const WS = "[\\t\\n\\f\\r ]*";
const CONSTRAINT_RE = new RegExp(`^${WS}(<=|>=|!=|~>|<|>|=|)${WS}(${VERSION})${WS}$`);
const INT64_MAX = 2n ** 63n - 1n;

/** Parses a version as go-version's NewVersion does, or says why not. */
export function parseVersion(text: string): Version | { error: string } {
  const m = VERSION_RE.exec(text);
  if (!m) return { error: `malformed version: ${text}` };
  return fromMatch(m, 1, text);
}

function fromMatch(m: RegExpExecArray, at: number, text: string): Version | { error: string } {
  const written = (m[at] ?? "").split(".");
  const segments: bigint[] = [];
  for (const s of written) {
    const n = BigInt(s);
    // go-version parses each segment as an int64
    if (n > INT64_MAX) return { error: `error parsing version: ${text}: segment ${s} is out of range` };
    segments.push(n);
  }
  while (segments.length < 3) segments.push(0n);
  // group 7 (a pre-release without a leading dash, or with one before letters) wins over group 4
  const prerelease = m[at + 6] || m[at + 3] || "";
  return { segments, written: written.length, prerelease, metadata: m[at + 9] ?? "" };
}

/** Parses a comma-separated constraint as go-version's NewConstraint does, or says why not. */
export function parseConstraint(text: string): Constraint[] | { error: string } {
  const out: Constraint[] = [];
  for (const single of text.split(",")) {
    const m = CONSTRAINT_RE.exec(single);
    if (!m) return { error: `malformed constraint: ${single}` };
    const version = fromMatch(m, 3, m[2] ?? "");
    if ("error" in version) return version;
    out.push({ op: (m[1] || "=") as Operator, version, text: single });
  }
  return out;
}

/** go-version's canonical form: segments, `-pre`, `+meta` (`v0.1` → `0.1.0`). */
export function versionString(v: Version): string {
  return (
    v.segments.join(".") + (v.prerelease ? `-${v.prerelease}` : "") + (v.metadata ? `+${v.metadata}` : "")
  );
}

/** -1, 0 or 1 as go-version's Compare (build metadata is ignored unless the strings are equal). */
export function compareVersions(a: Version, b: Version): -1 | 0 | 1 {
  if (versionString(a) === versionString(b)) return 0;
  if (equalSegments(a, b)) {
    if (a.prerelease === "" && b.prerelease === "") return 0;
    if (a.prerelease === "") return 1;
    if (b.prerelease === "") return -1;
    return comparePrereleases(a.prerelease, b.prerelease);
  }
  const n = Math.max(a.segments.length, b.segments.length);
  for (let i = 0; i < n; i++) {
    if (i >= a.segments.length) return b.segments.slice(i).every((s) => s === 0n) ? 0 : -1;
    if (i >= b.segments.length) return a.segments.slice(i).every((s) => s === 0n) ? 0 : 1;
    const x = a.segments[i] as bigint;
    const y = b.segments[i] as bigint;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

function equalSegments(a: Version, b: Version): boolean {
  return a.segments.length === b.segments.length && a.segments.every((s, i) => s === b.segments[i]);
}

function comparePrereleases(a: string, b: string): -1 | 0 | 1 {
  if (a === b) return 0;
  const pa = a.split(".");
  const pb = b.split(".");
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const c = comparePart(pa[i] ?? "", pb[i] ?? "");
    if (c !== 0) return c;
  }
  return 0;
}

const INT_RE = /^[+-]?[0-9]+$/;
/** A part Go's strconv.ParseInt reads as an int64. */
const isInt64 = (s: string) => INT_RE.test(s) && BigInt(s) <= INT64_MAX && BigInt(s) >= -INT64_MAX - 1n;

// go-version's comparePart: numeric parts sort before alphanumeric ones; an
// absent part sorts before a numeric one and after an alphanumeric one
function comparePart(a: string, b: string): -1 | 0 | 1 {
  if (a === b) return 0;
  const aNum = isInt64(a);
  const bNum = isInt64(b);
  if (a === "") return bNum ? -1 : 1;
  if (b === "") return aNum ? 1 : -1;
  if (aNum && !bNum) return -1;
  if (!aNum && bNum) return 1;
  if (!aNum && !bNum) return a > b ? 1 : -1;
  return BigInt(a) > BigInt(b) ? 1 : -1;
}

function prereleaseAllows(v: Version, c: Version): boolean {
  if (c.prerelease !== "" && v.prerelease !== "") return equalSegments(v, c);
  if (c.prerelease === "" && v.prerelease !== "") return false;
  return true;
}

/** Whether `v` satisfies one constraint (go-version's Constraint.Check). */
export function satisfies(v: Version, c: Constraint): boolean {
  const cmp = () => compareVersions(v, c.version);
  switch (c.op) {
    case "=":
      return cmp() === 0;
    case "!=":
      return cmp() !== 0;
    case ">":
      return prereleaseAllows(v, c.version) && cmp() === 1;
    case "<":
      return prereleaseAllows(v, c.version) && cmp() === -1;
    case ">=":
      return prereleaseAllows(v, c.version) && cmp() >= 0;
    case "<=":
      return prereleaseAllows(v, c.version) && cmp() <= 0;
    case "~>":
      return pessimistic(v, c.version);
  }
}

function pessimistic(v: Version, c: Version): boolean {
  if (!prereleaseAllows(v, c) || (c.prerelease !== "" && v.prerelease === "")) return false;
  if (compareVersions(v, c) < 0) return false;
  const cs = c.segments.length;
  if (cs > v.segments.length) return false;
  for (let i = 0; i < c.written - 1; i++) if (v.segments[i] !== c.segments[i]) return false;
  return (c.segments[cs - 1] as bigint) <= (v.segments[cs - 1] as bigint);
}

/** Whether `v` satisfies every constraint of the list. */
export function satisfiesAll(v: Version, cs: readonly Constraint[]): boolean {
  return cs.every((c) => satisfies(v, c));
}

/**
 * The highest of `candidates` satisfying every constraint, as Tekton picks it: later entries
 * win ties, and each entry's text is kept (the hub's own spelling).
 */
export function highestMatch<T extends { version: Version }>(
  candidates: readonly T[],
  cs: readonly Constraint[],
): T | undefined {
  let best: T | undefined;
  for (const c of candidates) {
    if (!satisfiesAll(c.version, cs)) continue;
    if (best && compareVersions(best.version, c.version) > 0) continue;
    best = c;
  }
  return best;
}
