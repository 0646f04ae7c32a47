// SHA256SUMS as sha256sum writes it (two spaces, paths relative to the release directory), so
// `sha256sum -c SHA256SUMS` checks a downloaded release.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

export const CHECKSUMS_FILE = "SHA256SUMS";

/** Every file under `dir` but the checksums file itself, sorted by path. */
function filesUnder(dir: string, root = dir): string[] {
  return readdirSync(dir)
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? filesUnder(path, root) : [relative(root, path)];
    })
    .filter((f) => f !== CHECKSUMS_FILE)
    .sort();
}

export function checksums(dir: string): string {
  return filesUnder(dir)
    .map(
      (f) =>
        `${createHash("sha256")
          .update(readFileSync(join(dir, f)))
          .digest("hex")}  ${f}\n`,
    )
    .join("");
}
