// Builds a service's image without docker, as an OCI image layout tar for
// `ctr images import` (the e2e node's containerd): the tree images/Dockerfile
// makes (pnpm deploy --legacy --prod, workspace libs moved out of node_modules, types stripped, src/main.js bundled),
// plus this machine's node binary and the shared libraries ldd lists, CA
// certificates and a passwd entry for UID 65532, in place of the slim base image.
// The git resolver's image (and the all-in-one's, which hosts it) also gets this machine's git,
// its https helper and their shared libraries (the Dockerfile installs Debian's git instead).
// Cached under $QUARRY_CACHE/images by a hash of every input (the service's and
// the workspace libs' files, the lockfile, node and its libraries), so a second
// build is a hash of the sources and nothing more.
// Usage: node dev/image-builder/src/build-layout.ts <service>...   (prints the tar and its sizes)
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { bundleTree } from "@quarry/images/bundle";
import { relinkWorkspace } from "@quarry/images/relink-workspace";
import { stripTree } from "@quarry/images/strip-types";
import { type LayoutSizes, sharedLibraries, writeImageLayout } from "./oci-layout.ts";

const run = promisify(execFile);
const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

/** Bump when the image's layout changes without its inputs changing. */
const RECIPE = "4";
const CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";
export const UID = 65532;

export interface ServiceImage extends LayoutSizes {
  /** The name it is imported under. */
  name: string;
  /** OCI layout tar. */
  tar: string;
}

/** Binaries a service runs besides node, copied with their shared libraries; symlinks stay symlinks. */
const EXTRA_BINARIES: Record<string, { files: string[]; links: Record<string, string> }> = {
  // the git engine shells out to git; fetches over http(s) go through git-remote-http
  "git-resolver": {
    files: ["/usr/bin/git", "/usr/lib/git-core/git-remote-http"],
    links: { "/usr/lib/git-core/git-remote-https": "git-remote-http" },
  },
};
// the all-in-one process hosts the git resolver
EXTRA_BINARIES["all-in-one"] = EXTRA_BINARIES["git-resolver"]!;

export const serviceImageName = (service: string) => `quarry.local/${service}:local`;

/**
 * The service's /app as images/Dockerfile's build stage makes it: `pnpm deploy` of just that
 * service (the workspace's store and lockfile: no network when the dependencies are installed),
 * its workspace libs moved out of node_modules, its TypeScript stripped to .js, its src/main.js
 * bundled (images/bundle.ts). Copies, not hard
 * links to the store: another deploy linking the same files changes their ctime under tar ("file
 * changed as we read it"), and the type stripping must not write into them.
 */
export async function deployServiceTree(
  service: string,
  app: string,
  opts: { bundle?: boolean } = {},
): Promise<void> {
  await run(
    "pnpm",
    [
      "deploy",
      "--legacy",
      "--prod",
      "--prefer-offline",
      "--config.package-import-method=copy",
      "--filter",
      `@quarry/${service}`,
      app,
    ],
    { cwd: repo, maxBuffer: 64 << 20 },
  );
  relinkWorkspace(app);
  stripTree(app);
  // false: the tree's modules as they are (bench/import-cost.ts measures a graph module by module)
  if (opts.bundle !== false) await bundleTree(app);
}

const sha256 = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");

/**
 * services/<service> and the services it depends on (the all-in-one process runs the others' code):
 * the workspace packages named @quarry/<dir> with a directory under services/.
 */
function serviceDirs(service: string): string[] {
  const pkg = JSON.parse(readFileSync(join(repo, "services", service, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
  };
  const deps = Object.keys(pkg.dependencies ?? {})
    .filter((d) => d.startsWith("@quarry/"))
    .map((d) => d.slice("@quarry/".length))
    .filter((d) => existsSync(join(repo, "services", d, "package.json")));
  return [service, ...deps].map((d) => `services/${d}`);
}

/** Files the image's content depends on, as "path hash" lines (git's view: tracked and untracked, not ignored). */
async function sourceHashes(service: string): Promise<string[]> {
  const { stdout } = await run(
    "git",
    ["ls-files", "--cached", "--others", "--exclude-standard", "libs", ...serviceDirs(service), "images"],
    { cwd: repo, maxBuffer: 64 << 20 },
  );
  // of images/ only the build's own code shapes the image (not its docs, tests or the Dockerfile)
  const builds = (f: string) => !f.startsWith("images/") || (f.endsWith(".ts") && !f.endsWith(".test.ts"));
  const files = [
    ...stdout.split("\n").filter((f) => f && builds(f)),
    "package.json",
    "pnpm-lock.yaml",
    "pnpm-workspace.yaml",
    "VERSION",
  ];
  return files
    .filter((f) => existsSync(join(repo, f)))
    .map((f) => `${f} ${sha256(readFileSync(join(repo, f)))}`);
}

/** The repository's version (its VERSION file). */
export const repoVersion = (): string => readFileSync(join(repo, "VERSION"), "utf8").trim();

/** The labels images/Dockerfile sets. */
export function imageLabels(service: string, version: string): Record<string, string> {
  return {
    "org.opencontainers.image.title": `quarry-${service}`,
    "org.opencontainers.image.version": version,
    "org.opencontainers.image.licenses": "Apache-2.0",
    "org.opencontainers.image.source": "https://github.com/quarry-dev/quarry",
  };
}

/**
 * Builds (or finds cached) the image of services/<service>, labelled with the VERSION file's
 * version (a release under another number relabels it: dev/release/src/relabel.ts).
 */
export async function buildServiceImage(service: string): Promise<ServiceImage> {
  const version = repoVersion();
  if (!existsSync(join(repo, "services", service, "src", "main.ts")))
    throw new Error(`no service ${service}`);
  const node = process.execPath;
  const extra = EXTRA_BINARIES[service] ?? { files: [], links: {} };
  const libs = [...new Set((await Promise.all([node, ...extra.files].map(sharedLibraries))).flat())].sort();
  const system = [node, ...extra.files, ...libs, CA_BUNDLE].map((f) => `${f} ${sha256(readFileSync(f))}`);
  const key = sha256([RECIPE, service, ...system, ...(await sourceHashes(service))].join("\n"));
  const dir = join(process.env.QUARRY_CACHE ?? join(homedir(), ".cache", "quarry"), "images");
  const tar = join(dir, `${service}-${key.slice(0, 16)}.tar`);
  const sizesFile = `${tar}.sizes.json`;
  const name = serviceImageName(service);
  if (existsSync(tar) && existsSync(sizesFile))
    return { name, tar, ...(JSON.parse(readFileSync(sizesFile, "utf8")) as LayoutSizes) };

  mkdirSync(dir, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), `quarry-image-${service}-`));
  try {
    const root = join(work, "rootfs");
    const app = join(root, "app");
    await deployServiceTree(service, app);
    for (const f of [...libs, ...extra.files]) {
      mkdirSync(join(root, dirname(f)), { recursive: true });
      copyFileSync(f, join(root, f));
    }
    for (const [link, target] of Object.entries(extra.links)) symlinkSync(target, join(root, link));
    mkdirSync(join(root, "usr/local/bin"), { recursive: true });
    copyFileSync(node, join(root, "usr/local/bin/node"));
    mkdirSync(join(root, dirname(CA_BUNDLE)), { recursive: true });
    copyFileSync(CA_BUNDLE, join(root, CA_BUNDLE));
    writeFileSync(
      join(root, "etc/passwd"),
      `root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:${UID}:${UID}:nonroot:/nonexistent:/sbin/nologin\n`,
    );
    writeFileSync(join(root, "etc/group"), `root:x:0:\nnonroot:x:${UID}:\n`);
    mkdirSync(join(work, "layout"));
    const tmp = `${tar}.${process.pid}.tmp`;
    const sizes = await writeImageLayout({
      root,
      layoutDir: join(work, "layout"),
      out: tmp,
      name,
      createdBy: `quarry dev/image-builder/src/build-layout.ts (${service})`,
      // as images/Dockerfile's last stage
      config: {
        User: `${UID}:${UID}`,
        Entrypoint: ["node", "src/main.js"],
        WorkingDir: "/app",
        Env: [
          "PATH=/usr/local/bin:/usr/bin:/bin",
          "NODE_ENV=production",
          "QUARRY_GIT_CACHE_DIR=/tmp/git-cache",
          "HOME=/nonexistent",
          `SSL_CERT_FILE=${CA_BUNDLE}`,
        ],
        ExposedPorts: { "8080/tcp": {} },
        Labels: imageLabels(service, version),
      },
    });
    writeFileSync(sizesFile, JSON.stringify(sizes));
    renameSync(tmp, tar);
    return { name, tar, ...sizes };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
  for (const service of process.argv.slice(2)) {
    const t0 = Date.now();
    const img = await buildServiceImage(service);
    console.log(
      `${service}: ${img.tar} compressed ${mb(img.compressed)}, uncompressed ${mb(img.uncompressed)} (${Date.now() - t0} ms)`,
    );
  }
}
