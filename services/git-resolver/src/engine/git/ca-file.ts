// The git binary reads trusted CAs from a file (GIT_SSL_CAINFO), and that file
// replaces its roots: write Node's public roots plus the configured bundle
// once per distinct bundle, named by its hash, under the writable /tmp.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { trustedCas } from "@quarry/resolver-sdk";

const written = new Map<string, string>();

/** Path of a CA file trusting the public roots and `caBundle`; undefined (git's own roots) without a bundle. */
export function caFileFor(
  caBundle: string | undefined,
  dir = join(tmpdir(), "quarry-git-trust"),
): string | undefined {
  if (!caBundle) return undefined;
  const hash = createHash("sha256").update(caBundle).digest("hex").slice(0, 32);
  const file = join(dir, `${hash}.pem`);
  if (written.get(hash) === file && existsSync(file)) return file;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // write-then-rename: a git process started meanwhile never reads half a file
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${trustedCas({ caBundle }).join("\n")}\n`, { mode: 0o600 });
  renameSync(tmp, file);
  written.set(hash, file);
  return file;
}
