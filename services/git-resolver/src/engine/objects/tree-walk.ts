// Walking a commit's tree the way a checkout would: following symlinks that
// stay inside the repository and refusing those that leave it. Independent of
// how objects are read (a TreeReader: tree-objects.ts in the engine, a map in
// the tests).
import { GitSourceError } from "../source.ts";

export interface TreeEntry {
  /** Octal mode as git prints it: 100644, 100755, 120000 (symlink), 040000 (tree), 160000 (submodule). */
  mode: string;
  type: "blob" | "tree" | "commit";
  oid: string;
}

/** Read access to one commit's tree. */
export interface TreeReader {
  /** The entry at exactly `path` (no symlink resolution), or undefined when nothing is there. */
  entry(path: string): Promise<TreeEntry | undefined>;
  /** A symlink's target, read from its blob. */
  linkTarget(oid: string): Promise<string>;
}

const SYMLINK = "120000";
/** Linux follows 40 links per lookup; nobody needs more than a handful inside a repository. */
export const MAX_SYMLINK_HOPS = 16;

/**
 * Resolves `path` in a tree to a regular file, like a checkout's filesystem
 * would: symlinks at any component are followed relative to the link's
 * directory; a target that is absolute or climbs above the repository root
 * is refused (path-escapes), as are loops (more than `maxHops` links).
 * The common case, a plain file, costs one lookup.
 */
export async function resolveInTree(
  reader: TreeReader,
  path: string,
  maxHops = MAX_SYMLINK_HOPS,
): Promise<{ entry: TreeEntry; path: string }> {
  let current = path;
  let hops = 0;
  for (;;) {
    const direct = await reader.entry(current);
    if (direct && direct.mode !== SYMLINK) return { entry: checkFile(direct, path, current), path: current };
    // a symlink at the full path, or at some component on the way (ls-tree sees no path through a link)
    const link = direct ? { at: current, entry: direct } : await findLink(reader, path, current);
    if (++hops > maxHops) {
      throw new GitSourceError(
        "symlink-loop",
        `more than ${maxHops} symlinks resolving ${q(path)} (a loop?)`,
      );
    }
    const target = await reader.linkTarget(link.entry.oid);
    const rest = current.slice(link.at.length + 1);
    current = joinInside(path, link.at, target, rest);
  }
}

function checkFile(entry: TreeEntry, requested: string, at: string): TreeEntry {
  const via = at === requested ? "" : ` (${q(requested)} after symlinks)`;
  if (entry.type === "tree") throw new GitSourceError("not-a-file", `${q(at)} is a directory${via}`);
  if (entry.type === "commit") throw new GitSourceError("not-a-file", `${q(at)} is a submodule${via}`);
  return entry;
}

/** The first symlink on the way to `current`; path-not-found when a component is missing or a file. */
async function findLink(
  reader: TreeReader,
  requested: string,
  current: string,
): Promise<{ at: string; entry: TreeEntry }> {
  const parts = current.split("/");
  for (let i = 1; i < parts.length; i++) {
    const prefix = parts.slice(0, i).join("/");
    const e = await reader.entry(prefix);
    if (!e || (e.type === "blob" && e.mode !== SYMLINK)) break;
    if (e.mode === SYMLINK) return { at: prefix, entry: e };
  }
  const via = current === requested ? "" : ` (${q(current)} after symlinks)`;
  throw new GitSourceError("path-not-found", `no such file ${q(requested)}${via}`);
}

/** `<dir of link>/<target>/<rest>`, normalised; refuses any result outside the repository. */
function joinInside(requested: string, linkPath: string, target: string, rest: string): string {
  const escapes = () =>
    new GitSourceError("path-escapes", `symlink ${q(linkPath)} points outside the repository (${q(target)})`);
  if (target.startsWith("/") || target === "") throw escapes();
  const out = linkPath.split("/").slice(0, -1);
  for (const part of [...target.split("/"), ...(rest ? rest.split("/") : [])]) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length === 0) throw escapes();
      out.pop();
    } else out.push(part);
  }
  if (out.length === 0)
    throw new GitSourceError("not-a-file", `${q(requested)} resolves to the repository root`);
  return out.join("/");
}

const q = (s: string) => JSON.stringify(s);
