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

/**
 * A commit object's bytes (as `git cat-file commit` prints them), in a repository of object format
 * `hash`: its signature is that format's header (`gpgsig`, `gpgsig-sha256`); the other format's
 * signature header, as git does, is part of neither the payload nor the signature.
 */
export function splitCommit(raw: Buffer, hash: "sha1" | "sha256" = "sha1"): SplitObject {
  const text = raw.toString("latin1");
  const headerEnd = text.indexOf("\n\n");
  const headers = headerEnd < 0 ? text : text.slice(0, headerEnd + 1);
  const ours = hash === "sha1" ? "gpgsig " : "gpgsig-sha256 ";
  const kept: string[] = [];
  let signature: string | undefined;
  let current: "ours" | "other" | undefined;
  for (const line of headers.split(/(?<=\n)/)) {
    if (current !== undefined && line.startsWith(" ")) {
      if (current === "ours") signature += line.slice(1);
      continue;
    }
    current = undefined;
    if (line.startsWith(ours) && signature === undefined) {
      current = "ours";
      signature = line.slice(ours.length);
    } else if (line.startsWith("gpgsig")) current = "other";
    else kept.push(line);
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
