// Writes libs/api/crds/*.yaml from crds.ts. With --check, writes nothing and
// exits 1 when a committed file differs from what would be generated (CI).
//   node libs/api/src/gen-crds.ts [--check]
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { generatedFiles } from "./crds.ts";

export const CRDS_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "crds");

function readOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** Paths (relative to cwd) of the committed files that differ from the generator's output. */
export function staleFiles(dir = CRDS_DIR): string[] {
  return Object.entries(generatedFiles())
    .filter(([name, content]) => readOrUndefined(join(dir, name)) !== content)
    .map(([name]) => relative(process.cwd(), join(dir, name)));
}

function main(argv: readonly string[]): number {
  if (argv.includes("--check")) {
    const stale = staleFiles();
    if (stale.length === 0) return 0;
    console.error(
      `Generated CRD files are out of date: ${stale.join(", ")}\n` +
        "Run `node libs/api/src/gen-crds.ts` and commit the result (see `git diff libs/api/crds`).",
    );
    return 1;
  }
  for (const [name, content] of Object.entries(generatedFiles())) {
    mkdirSync(dirname(join(CRDS_DIR, name)), { recursive: true });
    writeFileSync(join(CRDS_DIR, name), content);
    console.log(`wrote ${relative(process.cwd(), join(CRDS_DIR, name))}`);
  }
  return 0;
}

// Run as a script, not when imported (import.meta.main needs Node >= 24.2; the repo allows 22).
if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
