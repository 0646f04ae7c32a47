// An envFile: the pipe's `KEY=VALUE` lines, stored as one ConfigMap/Secret
// data key per line. The format is `kubectl create configmap --from-env-file`'s,
// with two differences: a line without `=` is an error (there is no process
// environment to take the value from), and a key set twice is an error (not
// "last one wins"), since either is far more likely a broken generator than
// intent.
//
//   - lines end with "\n" or "\r\n"; a UTF-8 byte order mark at the start is skipped;
//   - leading whitespace is ignored; blank lines and lines starting with "#" are skipped;
//   - KEY is everything before the first "=", VALUE everything after, verbatim (no quotes are
//     removed, no trailing whitespace trimmed, no escapes or variables expanded); VALUE may be empty;
//   - KEY must be a ConfigMap/Secret data key: [-._a-zA-Z0-9]+, at most 253 characters, not "."
//     or "..", not starting with "..";
//   - the file must be UTF-8.
//
// Error messages name the line and the rule, never the line's text: an envFile
// piped into a Secret holds secrets, and an error ends up in a request's
// status, logs and Events.
import { dataKeyProblem } from "./files.ts";

export type EnvFileResult =
  | { ok: true; entries: Map<string, string> }
  | { ok: false; line: number; message: string };

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const BOM = "\uFEFF";

export function parseEnvFile(bytes: Uint8Array): EnvFileResult {
  const entries = new Map<string, string>();
  const firstLine = new Map<string, number>();
  let start = 0;
  let n = 0;
  while (start < bytes.length) {
    n++;
    const nl = bytes.indexOf(0x0a, start);
    const end = nl === -1 ? bytes.length : nl;
    let text: string;
    try {
      text = decoder.decode(bytes.subarray(start, end));
    } catch {
      return { ok: false, line: n, message: `line ${n} is not valid UTF-8` };
    }
    start = end + 1;
    if (n === 1 && text.startsWith(BOM)) text = text.slice(BOM.length);
    if (text.endsWith("\r")) text = text.slice(0, -1);
    const line = text.replace(/^\s+/u, "");
    if (line === "" || line.startsWith("#")) continue;
    const eq = line.indexOf("=");
    if (eq === -1) return { ok: false, line: n, message: `line ${n} is not KEY=VALUE (it has no "=")` };
    const key = line.slice(0, eq);
    const problem = dataKeyProblem(key);
    if (problem)
      return { ok: false, line: n, message: `line ${n}: the key (before the first "=") ${problem}` };
    const earlier = firstLine.get(key);
    if (earlier !== undefined)
      return { ok: false, line: n, message: `line ${n} sets the same key as line ${earlier}` };
    firstLine.set(key, n);
    entries.set(key, line.slice(eq + 1));
  }
  return { ok: true, entries };
}
