// scripts/release.sh: see args.ts for the command line, release.ts for what a release is.
import { repoVersion } from "@quarry/image-builder/build-layout";
import { parseReleaseArgs } from "./args.ts";
import { release } from "./release.ts";

try {
  const args = parseReleaseArgs(process.argv.slice(2), repoVersion());
  const t0 = Date.now();
  const rel = await release(args, (line) => console.error(`[release] ${line}`));
  console.error(`[release] ${rel.version} in ${rel.out} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  console.log(rel.out);
} catch (err) {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
}
