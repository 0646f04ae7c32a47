// One release: every service's image pushed by digest with its SBOM, every chart stamped and
// pushed, the two install manifests rendered, release.json naming it all, SHA256SUMS over it.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { repoRoot } from "@quarry/harness/helm";
import type { ReleaseArgs } from "./args.ts";
import { copyCharts, pushCharts, type ReleasedChart, renderRelease, stampCharts } from "./charts.ts";
import { CHECKSUMS_FILE, checksums } from "./checksums.ts";
import { buildDockerfileImages, type ReleasedImage, releaseImage } from "./images.ts";

export interface Release {
  version: string;
  registry: string;
  images: ReleasedImage[];
  charts: ReleasedChart[];
  /** The release's directory. */
  out: string;
}

/** Every service under services/. */
export const releasedServices = (): string[] => readdirSync(join(repoRoot, "services")).sort();

export async function release(args: ReleaseArgs, log: (line: string) => void): Promise<Release> {
  const out = resolve(repoRoot, args.out);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const images: ReleasedImage[] = [];
  const work = mkdtempSync(join(tmpdir(), "quarry-release-"));
  try {
    const layouts = join(work, "layouts");
    if (args.dockerfile) await buildDockerfileImages(releasedServices(), args.version, layouts);
    // one at a time: each build runs pnpm deploy and gzips ~250 MB
    for (const service of releasedServices()) {
      const layout = args.dockerfile ? join(layouts, service) : undefined;
      const image = await releaseImage(service, { ...args, sbomDir: join(out, "sbom"), layout });
      log(`image ${image.repository}@${image.digest}`);
      images.push(image);
    }
    const charts = copyCharts(work);
    stampCharts(charts, { version: args.version, registry: args.registry, images });
    const pushed = await pushCharts(charts, { ...args, out: join(out, "charts") });
    for (const c of pushed) log(`chart ${c.ref}:${c.version}@${c.digest}`);
    await renderRelease(charts, join(out, "release.yaml"), false);
    await renderRelease(charts, join(out, "release-with-tekton-crds.yaml"), true);
    const rel: Release = { version: args.version, registry: args.registry, images, charts: pushed, out };
    writeFileSync(join(out, "release.json"), `${JSON.stringify(relative(rel), null, 2)}\n`);
    writeFileSync(join(out, CHECKSUMS_FILE), checksums(out));
    return rel;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** release.json names files relative to the release's directory, so the directory can move. */
function relative(rel: Release) {
  const strip = (p: string) => p.slice(rel.out.length + 1);
  return {
    version: rel.version,
    registry: rel.registry,
    images: rel.images.map((i) => ({ ...i, sbom: strip(i.sbom) })),
    charts: rel.charts.map((c) => ({ ...c, file: strip(c.file) })),
  };
}
