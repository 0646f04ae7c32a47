// A git commit or tag object split into what its signature covers and the
// signature itself. A commit carries the signature in its `gpgsig` (or
// `gpgsig-sha256`) header, continued on lines that start with a space, and
// is signed without that header; a tag carries it after its message and is
// signed up to it.

export type SignatureFormat = "ssh" | "openpgp" | "x509";

export type SplitObject =
  | { signed: false }
  | { signed: true; format: SignatureFormat; payload: Buffer; signature: string };

const BEGIN: Record<string, SignatureFormat> = {
  "-----BEGIN SSH SIGNATURE-----": "ssh",
  "-----BEGIN PGP SIGNATURE-----": "openpgp",
  "-----BEGIN SIGNED MESSAGE-----": "x509",
};

function formatOf(signature: string): SignatureFormat | undefined {
  const first = signature.split("\n", 1)[0]?.trim() ?? "";
  return BEGIN[first];
}

/** A commit object's bytes (as `git cat-file commit` prints them). */
export function splitCommit(raw: Buffer): SplitObject {
  const text = raw.toString("latin1");
  const headerEnd = text.indexOf("\n\n");
  const headers = headerEnd < 0 ? text : text.slice(0, headerEnd + 1);
  const lines = headers.split(/(?<=\n)/);
  const kept: string[] = [];
  let signature: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const m = /^gpgsig(?:-sha256)? (.*\n?)$/s.exec(line);
    if (!m || signature !== undefined) {
      kept.push(line);
      continue;
    }
    let sig = m[1]!;
    while (i + 1 < lines.length && lines[i + 1]!.startsWith(" ")) sig += lines[++i]!.slice(1);
    signature = sig;
  }
  if (signature === undefined) return { signed: false };
  const format = formatOf(signature);
  if (!format) return { signed: false };
  const payload = kept.join("") + (headerEnd < 0 ? "" : text.slice(headerEnd + 1));
  return { signed: true, format, payload: Buffer.from(payload, "latin1"), signature };
}

/** A tag object's bytes (as `git cat-file tag` prints them). */
export function splitTag(raw: Buffer): SplitObject {
  const text = raw.toString("latin1");
  let at = -1;
  for (const begin of Object.keys(BEGIN)) {
    const i = text.lastIndexOf(`\n${begin}`);
    if (i > at) at = i;
  }
  if (at < 0) return { signed: false };
  const signature = text.slice(at + 1);
  const format = formatOf(signature);
  if (!format) return { signed: false };
  return { signed: true, format, payload: Buffer.from(text.slice(0, at + 1), "latin1"), signature };
}
