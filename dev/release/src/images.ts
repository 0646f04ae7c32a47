// A service's image for a release: built as images/Dockerfile makes it (dev/image-builder, no
// container engine) or from images/Dockerfile itself with buildah, labelled with the release's
// version, pushed with crane under its tag, and recorded by the digest the registry answered; its
// SBOM (CycloneDX, from the npm tree the image holds) beside it.
import { execFile } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { ociTools } from "@quarry/devcluster/oci-tools";
import { repoRoot } from "@quarry/devcluster/paths";
import { buildServiceImage, deployServiceTree, imageLabels } from "@quarry/image-builder/build-layout";
import { relabelLayout } from "./relabel.ts";

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));

export interface ReleasedImage {
  service: string;
  /** registry/quarry-dev/<service> */
  repository: string;
  tag: string;
  /** sha256:… of the manifest the registry stored */
  digest: string;
  /** The SBOM's path. */
  sbom: string;
}

/** Where a service's image goes in the registry. */
export const imageRepository = (registry: string, service: string) => `${registry}/quarry-dev/${service}`;

/**
 * Every service's image built from images/Dockerfile (scripts/build-dockerfile-images.sh, buildah),
 * each as an OCI layout `<dir>/<service>`.
 */
export async function buildDockerfileImages(services: readonly string[], version: string, dir: string) {
  await run("bash", [join(repoRoot, "scripts", "build-dockerfile-images.sh"), ...services], {
    env: { ...process.env, QUARRY_IMAGE_OCI_DIR: dir, QUARRY_IMAGE_VERSION: version },
    maxBuffer: 64 << 20,
  });
}

export async function releaseImage(
  service: string,
  opts: {
    registry: string;
    version: string;
    plainHttp: boolean;
    sbomDir: string;
    /** An OCI layout of the image already built (buildDockerfileImages); else it is built here. */
    layout?: string;
  },
): Promise<ReleasedImage> {
  const repository = imageRepository(opts.registry, service);
  const work = mkdtempSync(join(tmpdir(), `quarry-release-${service}-`));
  try {
    let layout = opts.layout;
    let cachedSbom: string | undefined;
    if (!layout) {
      const built = await buildServiceImage(service);
      layout = join(work, "layout");
      mkdirSync(layout);
      await run("tar", ["-xf", built.tar, "-C", layout]);
      // the npm tree is the image's, whatever version it is released as
      cachedSbom = `${built.tar}.cdx.json`;
    }
    relabelLayout(layout, imageLabels(service, opts.version));
    const ref = `${repository}:${opts.version}`;
    const args = ["push", layout, ref, ...(opts.plainHttp ? ["--insecure"] : [])];
    const { stdout } = await run(ociTools().crane, args, { maxBuffer: 16 << 20 });
    const digest = /@(sha256:[0-9a-f]{64})/.exec(stdout)?.[1];
    if (!digest) throw new Error(`crane push ${ref} printed no digest: ${stdout}`);
    const sbom = join(opts.sbomDir, `${service}.cdx.json`);
    mkdirSync(opts.sbomDir, { recursive: true });
    if (cachedSbom && existsSync(cachedSbom)) copyFileSync(cachedSbom, sbom);
    else {
      await writeSbom(service, join(work, "app"), sbom);
      if (cachedSbom) copyFileSync(sbom, cachedSbom);
    }
    return { service, repository, tag: opts.version, digest, sbom };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * CycloneDX JSON of the image's /app: the same `pnpm deploy` tree the image holds, read by
 * CycloneDX's npm tool. Optional peers the service never installs are npm errors to it, not
 * missing components, hence --ignore-npm-errors.
 */
async function writeSbom(service: string, app: string, file: string): Promise<void> {
  await deployServiceTree(service, app);
  const modules = join(here, "..", "node_modules");
  await run(
    join(modules, ".bin", "cyclonedx-npm"),
    ["--ignore-npm-errors", "--omit", "dev", "--output-format", "JSON", "--output-file", file],
    {
      cwd: app,
      maxBuffer: 64 << 20,
      // the tool asks `npm ls`: this package's own npm, not whichever package manager started us
      // (under `pnpm run` npm_execpath names pnpm, whose `ls` takes other flags)
      env: { ...process.env, npm_execpath: join(modules, "npm", "bin", "npm-cli.js") },
    },
  );
}
