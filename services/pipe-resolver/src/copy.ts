// Copying a piped file out of the pipe pod: `tar cf - <path>` run through the
// pod's exec subresource in the waiting container, its stdout read as it
// streams (tar.ts). A file over the cap is refused when its tar header
// arrives, before any of its content is kept, and the exec is closed at once.
//
// The resolver sees only PodFileReader, so unit tests use a fake; the exec
// itself is an ExecFn (ws-exec.ts, a WebSocket of our own, in production;
// tests run a local tar). Nothing read here is logged: stdout is
// the file, and stderr (tar's own messages, which name paths only) is kept
// bounded for error messages.
import { type EntryType, FirstEntryReader } from "./tar.ts";

/** Which container of which pod: always the pipe pod's waiting container, in the request's namespace. */
export interface PodRef {
  namespace: string;
  pod: string;
  container: string;
}

export type FileRead =
  | { ok: true; bytes: Uint8Array }
  | { ok: false; problem: "missing" }
  | { ok: false; problem: "tooLarge"; size: number }
  | { ok: false; problem: "notFile"; type: EntryType }
  /** tar could not read the file (permissions, no tar in the image, a broken archive): `detail` says why. */
  | { ok: false; problem: "failed"; detail: string };

export interface PodFileReader {
  /**
   * Reads one regular file from a container. Over `maxBytes` is refused before its content is
   * copied. Throws for a failure of the connection itself (retried as transient).
   */
  read(target: PodRef, path: string, opts: { maxBytes: number; signal: AbortSignal }): Promise<FileRead>;
  /**
   * A copy is coming (a pipe pod was just created): get the connection ready in the background
   * while the pod runs, so the copy's step does not pay for it. Optional; never throws.
   */
  prepare?(): void;
}

export interface ExecOutcome {
  /** The command's exit code; undefined when the command could not be run (message says why). */
  exitCode: number | undefined;
  message: string;
}

export interface ExecIO {
  stdout(chunk: Uint8Array): void;
  stderr(chunk: Uint8Array): void;
  /** Aborting closes the exec at once; the promise then rejects. */
  signal: AbortSignal;
}

/** Runs a command in a container (no stdin, no tty) and resolves with its exit once the stream has ended. */
export type ExecFn = ((target: PodRef, command: readonly string[], io: ExecIO) => Promise<ExecOutcome>) & {
  /** What PodFileReader.prepare asks of the exec (ws-exec.ts: its connection, ahead of the first exec). */
  prepare?: () => void;
};

/** What of tar's stderr is kept for messages: paths and reasons, never file content. */
const MAX_STDERR_BYTES = 4096;
const MAX_DETAIL_CHARS = 300;

/** tar's stderr, bounded, minus its notice about stripping the leading `/`. */
function stderrDetail(bytes: Buffer): string {
  return bytes
    .toString("utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !/[Rr]emoving leading/.test(l))
    .join("; ")
    .slice(0, MAX_DETAIL_CHARS);
}

/** A PodFileReader that runs `tar cf - <path>` in the container. */
export class TarPodFileReader implements PodFileReader {
  private readonly exec: ExecFn;

  constructor(exec: ExecFn) {
    this.exec = exec;
  }

  prepare(): void {
    this.exec.prepare?.();
  }

  async read(
    target: PodRef,
    path: string,
    opts: { maxBytes: number; signal: AbortSignal },
  ): Promise<FileRead> {
    const reader = new FirstEntryReader(opts.maxBytes);
    const stop = new AbortController();
    let stderr = Buffer.alloc(0);
    let decided = false;
    let exit: ExecOutcome;
    try {
      exit = await this.exec(target, ["tar", "cf", "-", path], {
        stdout: (chunk) => {
          if (decided) return;
          const outcome = reader.push(chunk);
          if (!outcome) return;
          decided = true;
          // refused: nothing more is wanted, close the exec now (an empty or broken archive waits for
          // tar's exit and its stderr, which say why)
          if (outcome.kind === "tooLarge" || outcome.kind === "notFile")
            stop.abort(new Error(`stopped reading ${path}: ${outcome.kind}`));
        },
        stderr: (chunk) => {
          if (stderr.length < MAX_STDERR_BYTES)
            stderr = Buffer.concat([
              stderr,
              Buffer.from(chunk).subarray(0, MAX_STDERR_BYTES - stderr.length),
            ]);
        },
        signal: AbortSignal.any([opts.signal, stop.signal]),
      });
    } catch (err) {
      if (stop.signal.aborted && !opts.signal.aborted) return this.decide(reader.end(), undefined, stderr);
      throw err;
    }
    return this.decide(reader.end(), exit, stderr);
  }

  private decide(
    outcome: ReturnType<FirstEntryReader["end"]>,
    exit: ExecOutcome | undefined,
    stderr: Buffer,
  ): FileRead {
    const detail = () => {
      const said = stderrDetail(stderr);
      const how =
        exit === undefined
          ? ""
          : exit.exitCode === undefined
            ? exit.message
            : `tar exited with code ${exit.exitCode}`;
      return (
        [how, said]
          .filter((s) => s !== "")
          .join(": ")
          .slice(0, MAX_DETAIL_CHARS) || "tar failed"
      );
    };
    switch (outcome.kind) {
      case "tooLarge":
        return { ok: false, problem: "tooLarge", size: outcome.size };
      case "notFile":
        return { ok: false, problem: "notFile", type: outcome.type };
      case "file":
        // a short or changed read makes tar exit non-zero: only a clean exit counts
        if (exit !== undefined && exit.exitCode === 0) return { ok: true, bytes: outcome.bytes };
        return { ok: false, problem: "failed", detail: detail() };
      case "empty":
        if (/No such file or directory/i.test(stderr.toString("utf8")))
          return { ok: false, problem: "missing" };
        return { ok: false, problem: "failed", detail: detail() };
      case "corrupt":
        return {
          ok: false,
          problem: "failed",
          detail: `unreadable tar stream (${outcome.message}); ${detail()}`,
        };
    }
  }
}
