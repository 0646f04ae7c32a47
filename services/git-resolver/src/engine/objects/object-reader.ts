// One long-lived `git cat-file --batch-command` per cached repository, so a
// read is a line on a pipe instead of two process spawns (ls-tree, cat-file
// blob: ~5 ms of the event loop each in a large Node process).
//
// It reads the repository's objects through a "reader" git dir beside them
// (GIT_OBJECT_DIRECTORY = the repository's objects/) that is NOT a partial
// clone: a missing blob is answered "missing" at once instead of git
// fetching it, one blob at a time, while every other read on the pipe waits.
// Missing blobs are fetched in batches by the engine (blob-batcher.ts).
// Objects that arrive later (fetches, repacks) are found: git re-scans the
// pack directory when a lookup misses.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gitBaseEnv } from "../git/git-process.ts";
import { GitSourceError } from "../source.ts";

export interface ObjectInfo {
  type: string;
  size: number;
}

interface Pending {
  kind: "info" | "contents";
  resolve(v: ObjectInfo & { bytes?: Buffer }): void;
  missing(): void;
  reject(err: Error): void;
}

/** How long an unused reader process stays (then it exits; the next read starts another). */
const IDLE_MS = 30_000;

export class ObjectReader {
  private child: ChildProcessWithoutNullStreams | undefined;
  private starting: Promise<ChildProcessWithoutNullStreams> | undefined;
  private readonly pending: Pending[] = [];
  private buf: Buffer = Buffer.alloc(0);
  private idle: NodeJS.Timeout | undefined;
  private readonly objectsDir: string;
  private readonly readerDir: string;
  private readonly format: "sha1" | "sha256";
  /** Processes started (tests, metrics). */
  spawned = 0;

  constructor(repoDir: string, format: "sha1" | "sha256") {
    this.objectsDir = join(repoDir, "objects");
    this.readerDir = join(repoDir, "quarry-reader");
    this.format = format;
  }

  /** Type and size, or undefined when the object is not in the repository. */
  info(oid: string): Promise<ObjectInfo | undefined> {
    return this.ask("info", oid);
  }

  /** The object's bytes, or undefined when it is not in the repository. */
  async contents(oid: string): Promise<(ObjectInfo & { bytes: Buffer }) | undefined> {
    const out = await this.ask("contents", oid);
    return out?.bytes ? { type: out.type, size: out.size, bytes: out.bytes } : undefined;
  }

  /** Ends the process once what was asked is answered; a later read starts a new one. */
  retire(): void {
    const child = this.child;
    this.child = undefined;
    this.starting = undefined;
    if (this.idle) clearTimeout(this.idle);
    if (child && this.pending.length === 0) child.stdin.end();
    else if (child) this.retiring = child;
  }

  private retiring: ChildProcessWithoutNullStreams | undefined;

  private async ask(
    kind: "info" | "contents",
    oid: string,
  ): Promise<(ObjectInfo & { bytes?: Buffer }) | undefined> {
    if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(oid))
      throw new GitSourceError("unavailable", `not an object id: ${oid}`);
    // a retiring process must finish its queue before the new one takes over (answers come in order)
    const child = await this.process();
    return new Promise((resolve, reject) => {
      this.pending.push({ kind, resolve, missing: () => resolve(undefined), reject });
      child.stdin.write(`${kind} ${oid}\n`);
    });
  }

  private process(): Promise<ChildProcessWithoutNullStreams> {
    if (this.idle) clearTimeout(this.idle);
    if (this.child && this.retiring === undefined) return Promise.resolve(this.child);
    this.starting ??= this.start().catch((err: unknown) => {
      this.starting = undefined;
      throw err;
    });
    return this.starting;
  }

  private async start(): Promise<ChildProcessWithoutNullStreams> {
    await this.prepareReaderDir();
    // wait for a retiring process's answers: one queue, one order
    while (this.retiring) await new Promise((r) => setTimeout(r, 2));
    const child = spawn("git", ["--git-dir", this.readerDir, "cat-file", "--batch-command"], {
      env: { ...gitBaseEnv(), GIT_OBJECT_DIRECTORY: this.objectsDir },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.spawned++;
    child.stdout.on("data", (c: Buffer) => this.onData(c));
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      if (stderr.length < 4096) stderr += c.toString("utf8");
    });
    const fail = (why: string) => {
      const current = this.child === child || this.retiring === child;
      if (this.child === child) {
        this.child = undefined;
        this.starting = undefined;
      }
      if (this.retiring === child) this.retiring = undefined;
      // a retired process that ended after answering everything: the queue is the next one's
      if (!current) return;
      this.buf = Buffer.alloc(0);
      const err = new GitSourceError(
        "unavailable",
        `git cat-file: ${why}${stderr ? `: ${stderr.trim()}` : ""}`,
      );
      for (const p of this.pending.splice(0)) p.reject(err);
    };
    child.on("error", (err) => fail(err.message));
    child.on("close", (code) => fail(`exited (${code})`));
    child.stdin.on("error", () => {});
    this.child = child;
    return child;
  }

  /** A git dir that shares the repository's objects and has no promisor remote. */
  private async prepareReaderDir(): Promise<void> {
    await mkdir(join(this.readerDir, "refs"), { recursive: true });
    await mkdir(join(this.readerDir, "objects"), { recursive: true });
    await writeFile(join(this.readerDir, "HEAD"), "ref: refs/heads/main\n");
    const ext = this.format === "sha256" ? ["[extensions]", "\tobjectFormat = sha256"] : [];
    await writeFile(
      join(this.readerDir, "config"),
      ["[core]", "\trepositoryformatversion = 1", "\tbare = true", ...ext, ""].join("\n"),
    );
  }

  private onData(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    for (;;) {
      const p = this.pending[0];
      if (!p) break;
      const nl = this.buf.indexOf(10);
      if (nl < 0) break;
      const header = this.buf.subarray(0, nl).toString("utf8");
      if (header.endsWith(" missing")) {
        this.buf = this.buf.subarray(nl + 1);
        this.pending.shift();
        p.missing();
        continue;
      }
      const [, type, sizeText] = header.split(" ");
      const size = Number(sizeText);
      if (!type || !Number.isInteger(size)) {
        this.pending.shift();
        p.reject(
          new GitSourceError("unavailable", `git cat-file: unexpected answer ${JSON.stringify(header)}`),
        );
        this.buf = this.buf.subarray(nl + 1);
        continue;
      }
      if (p.kind === "info") {
        this.buf = this.buf.subarray(nl + 1);
        this.pending.shift();
        p.resolve({ type, size });
        continue;
      }
      // contents: header, size bytes, a newline
      if (this.buf.length < nl + 1 + size + 1) break;
      const bytes = Buffer.from(this.buf.subarray(nl + 1, nl + 1 + size));
      this.buf = this.buf.subarray(nl + 1 + size + 1);
      this.pending.shift();
      p.resolve({ type, size, bytes });
    }
    if (this.pending.length === 0) this.whenIdle();
  }

  private whenIdle(): void {
    if (this.retiring) {
      this.retiring.stdin.end();
      this.retiring = undefined;
    }
    if (this.idle) clearTimeout(this.idle);
    this.idle = setTimeout(() => this.retire(), IDLE_MS);
    this.idle.unref();
  }
}

/** One ObjectReader per repository directory, retired when the repository is evicted, dropped or repacked. */
export class ObjectReaders {
  private readonly readers = new Map<string, ObjectReader>();

  for(dir: string, format: "sha1" | "sha256"): ObjectReader {
    let r = this.readers.get(dir);
    if (!r) {
      r = new ObjectReader(dir, format);
      this.readers.set(dir, r);
    }
    return r;
  }

  retire(dir: string): void {
    this.readers.get(dir)?.retire();
    this.readers.delete(dir);
  }
}
