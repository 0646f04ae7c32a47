// The on-disk object cache: one bare, blob-filtered (partial-clone) git
// repository per remote URL under a cache root, kept across requests and
// restarts. Repositories in use are never evicted; past the size budget the
// least recently used ones go (last use = the directory's mtime, so the order
// survives a restart). Fetches into one repository run one at a time.
import { createHash, randomBytes } from "node:crypto";
import type { Dirent } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runGit } from "../git/git-process.ts";
import { GitSourceError } from "../source.ts";

export interface RepoHandle {
  readonly dir: string;
  readonly url: string;
  /** True once `refs/quarry/c/<commit>` exists: the commit and all its trees are here. */
  hasCommit(commit: string): Promise<boolean>;
  /** Runs `fn` holding this repository's fetch lock (waiting gives up when `signal` aborts). */
  exclusive<T>(signal: AbortSignal, fn: () => Promise<T>): Promise<T>;
  release(): void;
}

interface Entry {
  dir: string;
  url: string;
  bytes: number;
  lastUsed: number;
  /** when lastUsed was last written to the directory's mtime (what a restart reads back) */
  stamped: number;
  users: number;
  lock: Promise<void>;
}

/**
 * The directory's mtime carries lastUsed across restarts (eviction order); a minute's precision is
 * plenty for that, and a burst of reads then costs one utimes, not one per read.
 */
const STAMP_EVERY_MS = 60_000;

export interface ObjectCacheOptions {
  root: string;
  now?: () => number;
  onEvict?: (url: string, bytes: number, dir: string) => void;
}

/** The ref that pins a fetched commit (and keeps its objects from ever looking unreferenced). */
export const commitRef = (commit: string) => `refs/quarry/c/${commit}`;

export class ObjectCache {
  readonly root: string;
  private readonly entries = new Map<string, Entry>();
  private readonly creating = new Map<string, Promise<Entry>>();
  private readonly now: () => number;
  private readonly onEvict: ((url: string, bytes: number, dir: string) => void) | undefined;
  private loaded: Promise<void> | undefined;

  constructor(opts: ObjectCacheOptions) {
    this.root = opts.root;
    this.now = opts.now ?? Date.now;
    this.onEvict = opts.onEvict;
  }

  /** Total bytes on disk, as last measured. */
  totalBytes(): number {
    let sum = 0;
    for (const e of this.entries.values()) sum += e.bytes;
    return sum;
  }

  repositories(): number {
    return this.entries.size;
  }

  /** Scans the root once: removes leftovers of interrupted work, learns sizes and last use of what is there. */
  private load(): Promise<void> {
    this.loaded ??= (async () => {
      await mkdir(this.root, { recursive: true });
      for (const d of await readdir(this.root, { withFileTypes: true })) {
        if (!d.isDirectory()) continue;
        const dir = join(this.root, d.name);
        if (!/^[0-9a-f]{40}$/.test(d.name)) {
          await rm(dir, { recursive: true, force: true });
          continue;
        }
        const url = await readUrl(dir);
        if (url === undefined) {
          await rm(dir, { recursive: true, force: true });
          continue;
        }
        const st = await stat(dir);
        this.entries.set(d.name, {
          dir,
          url,
          bytes: await duBytes(dir),
          lastUsed: st.mtimeMs,
          stamped: st.mtimeMs,
          users: 0,
          lock: Promise.resolve(),
        });
      }
    })();
    return this.loaded;
  }

  /** The repository for `url` (created empty on first use), marked in use until release(). */
  async acquire(url: string, format: "sha1" | "sha256", signal: AbortSignal): Promise<RepoHandle> {
    await this.load();
    const key = createHash("sha256").update(`${format}\n${url}`).digest("hex").slice(0, 40);
    let entry = this.entries.get(key);
    if (!entry) {
      let pending = this.creating.get(key);
      if (!pending) {
        pending = this.create(key, url, format, signal).finally(() => this.creating.delete(key));
        this.creating.set(key, pending);
      }
      entry = await pending;
    }
    entry.users++;
    entry.lastUsed = this.now();
    if (entry.lastUsed - entry.stamped >= STAMP_EVERY_MS) {
      entry.stamped = entry.lastUsed;
      const t = new Date(entry.lastUsed);
      void utimes(entry.dir, t, t).catch(() => {});
    }
    return this.handle(entry);
  }

  private handle(entry: Entry): RepoHandle {
    let released = false;
    return {
      dir: entry.dir,
      url: entry.url,
      hasCommit: (commit) =>
        stat(join(entry.dir, commitRef(commit))).then(
          () => true,
          () => false,
        ),
      exclusive: async <T>(signal: AbortSignal, fn: () => Promise<T>): Promise<T> => {
        const previous = entry.lock;
        let unlock = () => {};
        entry.lock = new Promise<void>((r) => {
          unlock = r;
        });
        try {
          await abortable(previous, signal);
          return await fn();
        } finally {
          // a waiter that gave up still hands the lock on in order, after its predecessor
          void previous.then(unlock);
        }
      },
      release: () => {
        if (released) return;
        released = true;
        entry.users--;
      },
    };
  }

  private async create(
    key: string,
    url: string,
    format: "sha1" | "sha256",
    signal: AbortSignal,
  ): Promise<Entry> {
    // built under a temporary name and renamed, so a crash never leaves a half-made repository
    const tmp = join(this.root, `tmp-${randomBytes(6).toString("hex")}`);
    try {
      const init = await runGit({
        args: ["init", "--quiet", "--bare", `--object-format=${format}`, tmp],
        signal,
      });
      if (init.code !== 0) throw new GitSourceError("unavailable", `git init failed: ${init.stderr.trim()}`);
      await writeFile(join(tmp, "config"), repoConfig(url, format));
      await writeFile(join(tmp, "quarry-url"), `${url}\n`);
      const dir = join(this.root, key);
      await rm(dir, { recursive: true, force: true });
      await rename(tmp, dir);
      const entry: Entry = {
        dir,
        url,
        bytes: await duBytes(dir),
        lastUsed: this.now(),
        stamped: this.now(),
        users: 0,
        lock: Promise.resolve(),
      };
      this.entries.set(key, entry);
      return entry;
    } catch (err) {
      await rm(tmp, { recursive: true, force: true });
      throw err;
    }
  }

  /** Re-measures a repository after git wrote to it. */
  async measure(handle: RepoHandle): Promise<number> {
    const entry = this.byDir(handle.dir);
    const bytes = await duBytes(handle.dir);
    if (entry) entry.bytes = bytes;
    return bytes;
  }

  /** Drops a repository now (e.g. over max-repository-size); users still reading it see it vanish. */
  async drop(handle: RepoHandle): Promise<void> {
    const key = [...this.entries].find(([, e]) => e.dir === handle.dir)?.[0];
    if (key) this.entries.delete(key);
    await discard(this.root, handle.dir);
  }

  /** Evicts least recently used repositories not in use until the total is within `maxBytes`. */
  async evict(maxBytes: number): Promise<number> {
    if (maxBytes <= 0) return 0;
    let total = this.totalBytes();
    if (total <= maxBytes) return 0;
    let evicted = 0;
    const candidates = [...this.entries].sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
    for (const [key, e] of candidates) {
      if (total <= maxBytes) break;
      if (e.users > 0) continue;
      this.entries.delete(key);
      total -= e.bytes;
      evicted++;
      this.onEvict?.(e.url, e.bytes, e.dir);
      await discard(this.root, e.dir);
    }
    return evicted;
  }

  private byDir(dir: string): Entry | undefined {
    for (const e of this.entries.values()) if (e.dir === dir) return e;
    return undefined;
  }
}

/**
 * The repository's whole config, written once at creation: a partial clone
 * of `origin` (missing blobs are fetched on demand), and no background gc or
 * maintenance, which could prune the fetched objects or stall a request.
 */
function repoConfig(url: string, format: "sha1" | "sha256"): string {
  const quoted = `"${url.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
  return [
    "[core]",
    "\trepositoryformatversion = 1",
    "\tbare = true",
    "\tfilemode = true",
    "\tlogAllRefUpdates = false",
    "[extensions]",
    "\tpartialClone = origin",
    ...(format === "sha256" ? ["\tobjectFormat = sha256"] : []),
    '[remote "origin"]',
    `\turl = ${quoted}`,
    "\tpromisor = true",
    "\tpartialCloneFilter = blob:none",
    "[gc]",
    "\tauto = 0",
    "[maintenance]",
    "\tauto = false",
    "[fetch]",
    "\twriteCommitGraph = false",
    "",
  ].join("\n");
}

async function readUrl(dir: string): Promise<string | undefined> {
  try {
    return (await readFile(join(dir, "quarry-url"), "utf8")).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Renames out of the way first (instant), then removes in the background of the thread pool. */
async function discard(root: string, dir: string): Promise<void> {
  const trash = join(root, `trash-${randomBytes(6).toString("hex")}`);
  try {
    await rename(dir, trash);
  } catch {
    return;
  }
  await rm(trash, { recursive: true, force: true });
}

/** Bytes of all files under `dir` (a bare repository: a few packs and loose objects). */
export async function duBytes(dir: string): Promise<number> {
  let total = 0;
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true, recursive: true });
  } catch {
    return 0;
  }
  await Promise.all(
    entries
      .filter((e) => e.isFile())
      .map(async (e) => {
        try {
          // read the size first: `total += await …` would read `total` before the await and lose updates
          const { size } = await stat(join(e.parentPath, e.name));
          total += size;
        } catch {
          // removed meanwhile (a tmp pack renamed)
        }
      }),
  );
  return total;
}

function abortable(p: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}
