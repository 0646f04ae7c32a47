// The smallest tar reader the copy needs: `tar cf - <path>` of one file,
// read as it streams. It decides on the first entry: a regular file of at most
// maxBytes is collected; a larger one is refused as soon as its header
// arrives (before any of its content is kept), and so is anything that is not
// a regular file (a directory would bring its whole tree, a symlink points
// elsewhere). Memory stays bounded: headers and long names are capped, content
// by maxBytes, and bytes after the decision are dropped.
//
// Formats: ustar and GNU headers (GNU tar's and busybox's defaults), GNU long
// names (type L), pax extended headers (type x: path and size); global pax
// headers (type g) and long link names (type K) are skipped.

const BLOCK = 512;
/** Cap on a long name or pax header: paths are at most 1024 characters. */
const MAX_META_BYTES = 64 * 1024;

export type EntryType = "file" | "directory" | "symbolic link" | "hard link" | "device" | "fifo" | "other";

export type TarOutcome =
  | { kind: "file"; name: string; bytes: Uint8Array }
  | { kind: "tooLarge"; name: string; size: number }
  | { kind: "notFile"; name: string; type: EntryType }
  /** The archive ended (or the stream did) before any entry: tar wrote nothing it could read. */
  | { kind: "empty" }
  | { kind: "corrupt"; message: string };

type Phase =
  | { kind: "header" }
  | { kind: "meta"; type: "L" | "x" | "skip"; size: number; padded: number; data: Buffer; got: number }
  | { kind: "content"; name: string; data: Buffer; got: number };

const td = new TextDecoder();

function cString(b: Buffer, start: number, len: number): string {
  const field = b.subarray(start, start + len);
  const nul = field.indexOf(0);
  return td.decode(nul === -1 ? field : field.subarray(0, nul));
}

/** An octal numeric field, or base-256 (first byte 0x80) for huge values. */
function numeric(b: Buffer, start: number, len: number): number | undefined {
  const field = b.subarray(start, start + len);
  if ((field[0]! & 0x80) !== 0) {
    let n = field[0]! & 0x7f;
    for (const byte of field.subarray(1)) n = n * 256 + byte;
    return n;
  }
  const text = td
    .decode(field)
    .replace(/[\0 ]+$/, "")
    .replace(/^[ ]+/, "");
  if (text === "") return 0;
  return /^[0-7]+$/.test(text) ? Number.parseInt(text, 8) : undefined;
}

function checksumOk(h: Buffer): boolean {
  const want = numeric(h, 148, 8);
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i]!;
  return want === sum;
}

function entryType(flag: string): EntryType {
  switch (flag) {
    case "0":
    case "\0":
    case "7":
      return "file";
    case "5":
      return "directory";
    case "2":
      return "symbolic link";
    case "1":
      return "hard link";
    case "3":
    case "4":
      return "device";
    case "6":
      return "fifo";
    default:
      return "other";
  }
}

const padded = (n: number) => Math.ceil(n / BLOCK) * BLOCK;

/** Parses pax records ("<len> <key>=<value>\n") for path and size. */
function paxRecords(data: Buffer): { path?: string; size?: number } | string {
  const out: { path?: string; size?: number } = {};
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    if (space === -1) break;
    const len = Number.parseInt(td.decode(data.subarray(at, space)), 10);
    if (!Number.isInteger(len) || len <= 0 || at + len > data.length) return "malformed pax header";
    const record = td.decode(data.subarray(space + 1, at + len - 1));
    const eq = record.indexOf("=");
    if (eq !== -1) {
      const key = record.slice(0, eq);
      const value = record.slice(eq + 1);
      if (key === "path") out.path = value;
      if (key === "size") {
        if (!/^\d+$/.test(value)) return "malformed pax size";
        out.size = Number(value);
      }
    }
    at += len;
  }
  return out;
}

/** Reads the first entry of a tar stream, fed chunk by chunk. */
export class FirstEntryReader {
  private readonly maxBytes: number;
  private phase: Phase = { kind: "header" };
  private pending: Buffer = Buffer.alloc(0);
  private longName: string | undefined;
  private pax: { path?: string; size?: number } = {};
  private outcome: TarOutcome | undefined;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** Feeds bytes; returns the outcome once it is decided (later calls return the same and ignore the bytes). */
  push(chunk: Uint8Array): TarOutcome | undefined {
    if (this.outcome) return this.outcome;
    let buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    while (buf.length > 0 && !this.outcome) buf = this.step(buf);
    return this.outcome;
  }

  /** The stream ended: the outcome, `empty` when no entry started, `corrupt` when one was cut short. */
  end(): TarOutcome {
    if (this.outcome) return this.outcome;
    if (this.phase.kind === "header" && this.pending.length === 0 && this.longName === undefined)
      return { kind: "empty" };
    return { kind: "corrupt", message: "the archive ended inside an entry" };
  }

  private step(buf: Buffer): Buffer {
    const phase = this.phase;
    if (phase.kind === "header") {
      const need = BLOCK - this.pending.length;
      const take = buf.subarray(0, need);
      this.pending = this.pending.length === 0 ? Buffer.from(take) : Buffer.concat([this.pending, take]);
      if (this.pending.length === BLOCK) {
        const header = this.pending;
        this.pending = Buffer.alloc(0);
        this.header(header);
      }
      return buf.subarray(take.length);
    }
    if (phase.kind === "meta") {
      const take = buf.subarray(0, phase.padded - phase.got);
      const keep = take.subarray(0, Math.max(0, phase.size - phase.got));
      keep.copy(phase.data, phase.got);
      phase.got += take.length;
      if (phase.got === phase.padded) this.metaDone(phase);
      return buf.subarray(take.length);
    }
    const take = buf.subarray(0, phase.data.length - phase.got);
    take.copy(phase.data, phase.got);
    phase.got += take.length;
    if (phase.got === phase.data.length) this.outcome = { kind: "file", name: phase.name, bytes: phase.data };
    return buf.subarray(take.length);
  }

  private header(h: Buffer): void {
    if (h.every((b) => b === 0)) {
      this.outcome = { kind: "empty" };
      return;
    }
    if (!checksumOk(h)) {
      this.outcome = { kind: "corrupt", message: "a tar header's checksum does not match" };
      return;
    }
    const flag = String.fromCharCode(h[156]!);
    const size = numeric(h, 124, 12);
    if (size === undefined) {
      this.outcome = { kind: "corrupt", message: "a tar header's size is not a number" };
      return;
    }
    if (flag === "L" || flag === "x" || flag === "g" || flag === "K") {
      if (size > MAX_META_BYTES) {
        this.outcome = { kind: "corrupt", message: `a tar ${flag} header of ${size} bytes is too long` };
        return;
      }
      const type = flag === "L" ? "L" : flag === "x" ? "x" : "skip";
      this.phase = { kind: "meta", type, size, padded: padded(size), data: Buffer.alloc(size), got: 0 };
      if (size === 0) this.metaDone(this.phase);
      return;
    }
    const magic = h.subarray(257, 263).toString("latin1");
    const prefix = magic === "ustar\0" ? cString(h, 345, 155) : "";
    const name =
      this.pax.path ?? this.longName ?? (prefix ? `${prefix}/${cString(h, 0, 100)}` : cString(h, 0, 100));
    const realSize = this.pax.size ?? size;
    const type = entryType(flag);
    if (type !== "file") {
      this.outcome = { kind: "notFile", name, type };
      return;
    }
    if (realSize > this.maxBytes) {
      this.outcome = { kind: "tooLarge", name, size: realSize };
      return;
    }
    const data = Buffer.alloc(realSize);
    if (realSize === 0) {
      this.outcome = { kind: "file", name, bytes: data };
      return;
    }
    this.phase = { kind: "content", name, data, got: 0 };
  }

  private metaDone(phase: Extract<Phase, { kind: "meta" }>): void {
    if (phase.type === "L") this.longName = cString(phase.data, 0, phase.data.length);
    if (phase.type === "x") {
      const records = paxRecords(phase.data);
      if (typeof records === "string") {
        this.outcome = { kind: "corrupt", message: records };
        return;
      }
      this.pax = records;
    }
    this.phase = { kind: "header" };
  }
}
