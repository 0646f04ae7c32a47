// Go's encoding/json output for the two non-string ParamValue shapes, byte for
// byte, because Tekton hashes json.Marshal's bytes into request names.
// Differences from JSON.stringify that matter: Go sorts map keys by byte order
// (JS objects put integer-like keys first), and escapes <, >, &, U+2028 and
// U+2029 as \u003c, \u003e, \u0026, \u2028, \u2029. Go >= 1.22 writes \b and \f
// like JSON.stringify does; other control characters are \u00xx in both.

const goEscapes: Readonly<Record<string, string>> = {
  "<": "\\u003c",
  ">": "\\u003e",
  "&": "\\u0026",
  "\u2028": "\\u2028",
  "\u2029": "\\u2029",
};

function goString(s: string): string {
  // Go sees UTF-8 from the apiserver, where a lone surrogate is already U+FFFD.
  return JSON.stringify(s.toWellFormed()).replace(/[<>&\u2028\u2029]/g, (c) => goEscapes[c]!);
}

/** Go's byte-wise string order (UTF-8 bytes), which differs from JS `<` above the BMP. */
export function compareGoStrings(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/** json.Marshal of a []string or map[string]string, as Go would write it. */
export function goJsonMarshal(value: readonly string[] | Readonly<Record<string, string>>): string {
  if (Array.isArray(value)) return `[${value.map(goString).join(",")}]`;
  const entries = Object.entries(value).sort(([a], [b]) => compareGoStrings(a, b));
  return `{${entries.map(([k, v]) => `${goString(k)}:${goString(v)}`).join(",")}}`;
}
