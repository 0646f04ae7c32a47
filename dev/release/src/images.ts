// A service's image for a release: built as images/Dockerfile makes it (dev/image-builder, no
// container engine), labelled with the release's version, pushed with crane under its tag, and
// recorded by the digest the registry answered; its SBOM (CycloneDX, from the npm tree the image
// holds) beside it.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { ociTools } from "@quarry/devcluster/oci-tools";
import { buildServiceImage, deployServiceTree } from "@quarry/image-builder/build-layout";

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

export async function releaseImage(
  service: string,
  opts: { registry: string; version: string; plainHttp: boolean; sbomDir: string },
): Promise<ReleasedImage> {
  const built = await buildServiceImage(service, { version: opts.version });
  const repository = imageRepository(opts.registry, service);
  const work = mkdtempSync(join(tmpdir(), `quarry-release-${service}-`));
  try {
    const layout = join(work, "layout");
    mkdirSync(layout);
    await run("tar", ["-xf", built.tar, "-C", layout]);
    const ref = `${repository}:${opts.version}`;
    const args = ["push", layout, ref, ...(opts.plainHttp ? ["--insecure"] : [])];
    const { stdout } = await run(ociTools().crane, args, { maxBuffer: 16 << 20 });
    const digest = /@(sha256:[0-9a-f]{64})/.exec(stdout)?.[1];
    if (!digest) throw new Error(`crane push ${ref} printed no digest: ${stdout}`);
    const sbom = join(opts.sbomDir, `${service}.cdx.json`);
    await writeSbom(service, join(work, "app"), sbom);
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
  mkdirSync(dirname(file), { recursive: true });
  const tool = join(here, "..", "node_modules", ".bin", "cyclonedx-npm");
  await run(
    tool,
    ["--ignore-npm-errors", "--omit", "dev", "--output-format", "JSON", "--output-file", file],
    { cwd: app, maxBuffer: 64 << 20 },
  );
}
