// Reading a commit's tree from raw objects (ObjectReader) instead of one
// `git ls-tree` process per lookup. Parsed trees are kept in memory by
// object id: content-addressed, so never stale, and a burst reading many
// files of one commit parses its directories once.
import type { LRUCache } from "lru-cache";
import { GitSourceError } from "../source.ts";
import type { RepoBlobs } from "./blob-read.ts";
import type { ObjectReader } from "./object-reader.ts";
import type { TreeEntry, TreeReader } from "./tree-walk.ts";

export type ParsedTree = Map<string, TreeEntry>;

/** A tree object's entries: "<mode> <name>\0<raw id>" each (20 bytes for sha1, 32 for sha256). */
export function parseTree(data: Buffer, format: "sha1" | "sha256"): ParsedTree {
  const idLen = format === "sha256" ? 32 : 20;
  const out: ParsedTree = new Map();
  let at = 0;
  while (at < data.length) {
    const sp = data.indexOf(0x20, at);
    const nul = data.indexOf(0, sp + 1);
    if (sp < 0 || nul < 0 || nul + 1 + idLen > data.length) throw new Error("malformed tree object");
    const rawMode = data.subarray(at, sp).toString("latin1");
    const name = data.subarray(sp + 1, nul).toString("utf8");
    const oid = data.subarray(nul + 1, nul + 1 + idLen).toString("hex");
    at = nul + 1 + idLen;
    // as `git ls-tree` prints modes: six digits (trees are stored as "40000")
    const mode = rawMode.padStart(6, "0");
    const type = mode === "040000" ? "tree" : mode === "160000" ? "commit" : "blob";
    out.set(name, { mode, type, oid });
  }
  return out;
}

/** The root tree id named by a commit object ("tree <id>" on its first line). */
export function commitTree(data: Buffer): string {
  const m = /^tree ([0-9a-f]{40}(?:[0-9a-f]{24})?)\n/.exec(data.subarray(0, 80).toString("latin1"));
  if (!m?.[1]) throw new Error("malformed commit object");
  return m[1];
}

export interface TreeObjectsDeps {
  reader: ObjectReader;
  format: "sha1" | "sha256";
  /** Shared cache of parsed trees by id; sized by the caller. */
  trees: LRUCache<string, ParsedTree>;
  /** Blobs (symlink targets), fetched if missing. */
  blobs: RepoBlobs;
}

/** TreeReader over the object reader; `commit` must be in the repository (trees included). */
export function treeObjectsReader(deps: TreeObjectsDeps, commit: string, url: string): TreeReader {
  let root: Promise<string> | undefined;
  const object = async (oid: string, what: string) => {
    const o = await deps.reader.contents(oid);
    if (!o) throw new GitSourceError("unavailable", `${what} ${oid} of ${url} is missing from the cache`);
    return o;
  };
  const tree = async (oid: string): Promise<ParsedTree> => {
    const hit = deps.trees.get(oid);
    if (hit) return hit;
    const o = await object(oid, "tree");
    const parsed = parseTree(o.bytes, deps.format);
    deps.trees.set(oid, parsed);
    return parsed;
  };
  return {
    entry: async (path) => {
      root ??= object(commit, "commit").then((o) => commitTree(o.bytes));
      const parts = path.split("/");
      if (parts.some((p) => p === "")) return undefined;
      let current = await tree(await root);
      for (let i = 0; i < parts.length; i++) {
        const e = current.get(parts[i] as string);
        if (!e || i === parts.length - 1) return e;
        if (e.type !== "tree") return undefined;
        current = await tree(e.oid);
      }
      return undefined;
    },
    linkTarget: async (oid) => Buffer.from(await deps.blobs.read(oid, oid, 4096)).toString("utf8"),
  };
}
