// The key and resourceVersion of a watch event's object, read from the raw
// line without parsing it. A replica that holds some of a service's buckets
// receives every request's events; skipping the ones outside its buckets before
// JSON.parse is what keeps an extra replica from paying for every request again.
//
// The scan walks the JSON structure (strings with escapes, nested objects and
// arrays) rather than searching for substrings: the apiserver encodes custom
// resources with sorted keys, so labels, annotations and managedFields come
// before metadata.name and may themselves hold a "name" key. Anything it does
// not recognise (bookmarks, errors, escaped names, malformed lines) returns
// undefined, and the caller parses the line as before.

export interface PeekedEvent {
  /** namespace/name, or name for a cluster-scoped object: the informer's key. */
  key: string;
  resourceVersion: string | undefined;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

export function peekWatchEvent(line: string): PeekedEvent | undefined {
  try {
    return new Scanner(line).event();
  } catch {
    return undefined;
  }
}

class Unreadable extends Error {}

class Scanner {
  private i = 0;
  private readonly s: string;

  constructor(s: string) {
    this.s = s;
  }

  /** {"type": ..., "object": {...}}: only ADDED, MODIFIED and DELETED carry an object with a key. */
  event(): PeekedEvent | undefined {
    let found: PeekedEvent | undefined;
    let type: string | undefined;
    this.members((key) => {
      if (key === "type") {
        type = this.simpleString();
        if (type !== "ADDED" && type !== "MODIFIED" && type !== "DELETED") throw new Unreadable();
      } else if (key === "object") found = this.object();
      else this.skipValue();
    });
    return type ? found : undefined;
  }

  private object(): PeekedEvent | undefined {
    let found: PeekedEvent | undefined;
    this.members((key) => {
      if (key === "metadata") found = this.metadata();
      else this.skipValue();
    });
    return found;
  }

  private metadata(): PeekedEvent | undefined {
    let name: string | undefined;
    let namespace: string | undefined;
    let resourceVersion: string | undefined;
    this.members((key) => {
      if (key === "name") name = this.simpleString();
      else if (key === "namespace") namespace = this.simpleString();
      else if (key === "resourceVersion") resourceVersion = this.simpleString();
      else this.skipValue();
    });
    if (!name) return undefined;
    return { key: namespace ? `${namespace}/${name}` : name, resourceVersion };
  }

  /** Walks an object's members, handing each key to `onMember`, which must consume its value. */
  private members(onMember: (key: string) => void): void {
    this.expect(OPEN_BRACE);
    if (this.peek() === CLOSE_BRACE) {
      this.i++;
      return;
    }
    for (;;) {
      const key = this.simpleString();
      this.expect(COLON);
      onMember(key);
      const c = this.next();
      if (c === CLOSE_BRACE) return;
      if (c !== COMMA) throw new Unreadable();
    }
  }

  /** A string without escapes (keys, names, versions); one with escapes is left to JSON.parse. */
  private simpleString(): string {
    this.skipSpace();
    if (this.s.charCodeAt(this.i) !== QUOTE) throw new Unreadable();
    const end = this.s.indexOf('"', this.i + 1);
    if (end < 0) throw new Unreadable();
    const value = this.s.slice(this.i + 1, end);
    if (value.includes("\\")) throw new Unreadable();
    this.i = end + 1;
    return value;
  }

  private skipValue(): void {
    this.skipSpace();
    const c = this.s.charCodeAt(this.i);
    if (c === QUOTE) {
      this.skipString();
      return;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      this.skipNested();
      return;
    }
    // a number, true, false or null: up to the next delimiter
    while (this.i < this.s.length) {
      const d = this.s.charCodeAt(this.i);
      if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET) return;
      this.i++;
    }
    throw new Unreadable();
  }

  private skipString(): void {
    let j = this.i + 1;
    for (;;) {
      const end = this.s.indexOf('"', j);
      if (end < 0) throw new Unreadable();
      let slashes = 0;
      for (let k = end - 1; this.s.charCodeAt(k) === BACKSLASH; k--) slashes++;
      j = end + 1;
      if (slashes % 2 === 0) break;
    }
    this.i = j;
  }

  /** An object or array, by depth; strings are skipped whole so their brackets do not count. */
  private skipNested(): void {
    let depth = 0;
    while (this.i < this.s.length) {
      const c = this.s.charCodeAt(this.i);
      if (c === QUOTE) {
        this.skipString();
        continue;
      }
      this.i++;
      if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        depth--;
        if (depth === 0) return;
      }
    }
    throw new Unreadable();
  }

  private expect(code: number): void {
    if (this.next() !== code) throw new Unreadable();
  }

  private next(): number {
    this.skipSpace();
    return this.s.charCodeAt(this.i++);
  }

  private peek(): number {
    this.skipSpace();
    return this.s.charCodeAt(this.i);
  }

  private skipSpace(): void {
    for (;;) {
      const c = this.s.charCodeAt(this.i);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return;
      this.i++;
    }
  }
}
