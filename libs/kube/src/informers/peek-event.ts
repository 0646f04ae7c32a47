// The key and resourceVersion of a watch event's object, read from the raw
// line without parsing it. A replica that holds some of a service's buckets
// receives every request's events; skipping the ones outside its buckets before
// JSON.parse is what keeps an extra replica from paying for every request again.
//
// The apiserver writes each event compactly, type first, and the object's
// apiVersion and kind before its metadata. Inside metadata the scan follows the
// JSON structure (strings with escapes, nested objects and arrays) rather than
// searching for substrings: custom resources come with sorted keys, so labels,
// annotations and managedFields precede metadata.name and may hold a "name"
// key themselves. Anything else (bookmarks, errors, another layout, escaped
// names, malformed lines) returns undefined, and the caller parses the line.

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
const COMMA = 0x2c;

/** What precedes the object's metadata: the event type, then apiVersion and kind, in either order. */
const HEAD =
  /^\{"type":"(ADDED|MODIFIED|DELETED)","object":\{(?:"(?:apiVersion|kind)":"[^"\\]*",){0,2}"metadata":\{/;

export function peekWatchEvent(line: string): PeekedEvent | undefined {
  // the apiserver's encoding: compact, type first, metadata after apiVersion and kind
  const head = HEAD.exec(line);
  if (!head) return undefined;
  return metadataOf(line, head[0].length);
}

/**
 * Walks the metadata object's members from `i` (just inside its brace), reading name, namespace
 * and resourceVersion where they sit at its own level and skipping every other value whole: one
 * pass over characters, strings jumped over with indexOf.
 */
function metadataOf(s: string, from: number): PeekedEvent | undefined {
  let name: string | undefined;
  let namespace: string | undefined;
  let resourceVersion: string | undefined;
  let depth = 1;
  // at depth 1, the next string is a key when the last structural character was { or ,
  let expectKey = true;
  let i = from;
  const n = s.length;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(s, i);
      if (end < 0) return undefined;
      if (depth === 1 && expectKey) {
        const key = s.slice(i + 1, end);
        // "key":"value" at this level: the three wanted values are plain strings
        if (key === "name" || key === "namespace" || key === "resourceVersion") {
          if (s.charCodeAt(end + 1) !== 0x3a || s.charCodeAt(end + 2) !== QUOTE) return undefined;
          const valueEnd = s.indexOf('"', end + 3);
          if (valueEnd < 0) return undefined;
          const value = s.slice(end + 3, valueEnd);
          if (value.includes("\\")) return undefined;
          if (key === "name") name = value;
          else if (key === "namespace") namespace = value;
          else resourceVersion = value;
          i = valueEnd + 1;
          expectKey = false;
          continue;
        }
        expectKey = false;
      }
      i = end + 1;
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) break;
    } else if (c === COMMA && depth === 1) expectKey = true;
    i++;
  }
  if (depth !== 0 || !name) return undefined;
  return { key: namespace ? `${namespace}/${name}` : name, resourceVersion };
}

/** Index of the quote closing the string that opens at `i`, or -1. */
function stringEnd(s: string, i: number): number {
  let j = i + 1;
  for (;;) {
    const end = s.indexOf('"', j);
    if (end < 0) return -1;
    let slashes = 0;
    for (let k = end - 1; s.charCodeAt(k) === BACKSLASH; k--) slashes++;
    if (slashes % 2 === 0) return end;
    j = end + 1;
  }
}
