// The test node's two images, built without docker or a registry and imported
// into its containerd with `ctr images import`:
// - pause: the pod sandbox, a static C program (pause.c) that waits and reaps;
// - tools: busybox-static with its applet links, and openssl with the shared
//   libraries ldd lists and the loader; pipe pods' init containers run openssl
//   or `sh -c` scripts in it and their waiting containers `sleep`.
// Each is one uncompressed layer tarred by GNU tar with fixed owners and times,
// written as an OCI image layout tar. The tars are cached under
// $QUARRY_CACHE/images keyed by a hash of their inputs (the host's binaries,
// pause.c, gcc's version), so a changed Debian package makes a new image.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
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
import { sharedLibraries, writeLayoutFiles } from "@quarry/image-builder/oci-layout";

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));

/** Names the images are imported under; fixed, since every node's containerd starts empty. */
export const PAUSE_IMAGE = "quarry.local/e2e/pause:local";
export const TOOLS_IMAGE = "quarry.local/e2e/tools:local";

/** Bump when the layout of an image changes without its inputs changing. */
const RECIPE = "1";
const BUSYBOX = "/bin/busybox";
const OPENSSL = "/usr/bin/openssl";
const OPENSSL_CNF = "/usr/lib/ssl/openssl.cnf";
const PATH_ENV = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export interface NodeImage {
  name: string;
  /** OCI layout tar for `ctr images import`. */
  tar: string;
}

export interface NodeImages {
  pause: NodeImage;
  tools: NodeImage;
}

function cacheDir(): string {
  return join(process.env.QUARRY_CACHE ?? join(homedir(), ".cache", "quarry"), "images");
}

const sha256 = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");

/** Builds (or finds cached) both images. */
export async function buildNodeImages(): Promise<NodeImages> {
  const [pause, tools] = await Promise.all([pauseImage(), toolsImage()]);
  return { pause, tools };
}

async function pauseImage(): Promise<NodeImage> {
  const source = readFileSync(join(here, "pause.c"));
  const gcc = (await run("gcc", ["--version"])).stdout.split("\n")[0] ?? "";
  const key = sha256(`${RECIPE}\n${gcc}\n${sha256(source)}`);
  return cached("pause", key, async (root) => {
    await run("gcc", ["-static", "-O2", "-s", "-o", join(root, "pause"), join(here, "pause.c")]);
    return { Entrypoint: ["/pause"], Env: [PATH_ENV] };
  }).then((tar) => ({ name: PAUSE_IMAGE, tar }));
}

async function toolsImage(): Promise<NodeImage> {
  for (const f of [BUSYBOX, OPENSSL])
    if (!existsSync(f))
      throw new Error(
        `${f} is missing; dev/devcluster/src/build-node.sh installs busybox-static and openssl`,
      );
  const applets = (await run(BUSYBOX, ["--list-full"])).stdout.split("\n").filter(Boolean);
  const files = [BUSYBOX, OPENSSL, ...(await sharedLibraries(OPENSSL))];
  if (existsSync(OPENSSL_CNF)) files.push(OPENSSL_CNF);
  const key = sha256([RECIPE, ...applets, ...files.map((f) => `${f} ${sha256(readFileSync(f))}`)].join("\n"));
  const tar = await cached("tools", key, async (root) => {
    // every file at the path it is linked or looked up under, symlinks followed
    for (const f of files) {
      mkdirSync(join(root, dirname(f)), { recursive: true });
      copyFileSync(f, join(root, f));
    }
    for (const a of applets) {
      const target = join(root, a);
      if (existsSync(target)) continue; // bin/busybox itself
      mkdirSync(dirname(target), { recursive: true });
      symlinkSync(BUSYBOX, target);
    }
    mkdirSync(join(root, "etc"), { recursive: true });
    mkdirSync(join(root, "tmp"));
    chmodSync(join(root, "tmp"), 0o1777);
    writeFileSync(
      join(root, "etc", "passwd"),
      "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n",
    );
    writeFileSync(join(root, "etc", "group"), "root:x:0:\nnogroup:x:65534:\n");
    return { Cmd: ["/bin/sh"], Env: [PATH_ENV, "OPENSSL_CONF=/usr/lib/ssl/openssl.cnf"] };
  });
  return { name: TOOLS_IMAGE, tar };
}

/**
 * The cached image tar for `key`, or a new one: `fill` writes the root file
 * system into a directory and returns the image config's `config` section.
 */
async function cached(
  kind: string,
  key: string,
  fill: (root: string) => Promise<Record<string, unknown>>,
): Promise<string> {
  const dir = cacheDir();
  const file = join(dir, `${kind}-${key.slice(0, 16)}.tar`);
  if (existsSync(file)) return file;
  mkdirSync(dir, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), `quarry-image-${kind}-`));
  try {
    const root = join(work, "rootfs");
    mkdirSync(root);
    const config = await fill(root);
    const layer = join(work, "layer.tar");
    await run("tar", [
      "--create",
      `--file=${layer}`,
      `--directory=${root}`,
      "--sort=name",
      "--mtime=@0",
      "--owner=0",
      "--group=0",
      "--numeric-owner",
      "--format=gnu",
      ".",
    ]);
    const layout = join(work, "layout");
    writeLayout(layout, readFileSync(layer), config, kind);
    const tmp = `${file}.${process.pid}.tmp`;
    await run("tar", [
      "--create",
      `--file=${tmp}`,
      `--directory=${layout}`,
      "oci-layout",
      "index.json",
      "blobs",
    ]);
    renameSync(tmp, file);
    return file;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function writeLayout(dir: string, layer: Buffer, config: Record<string, unknown>, kind: string): void {
  writeLayoutFiles(dir, {
    layer,
    layerMediaType: "application/vnd.oci.image.layer.v1.tar",
    // an uncompressed layer is its own diff
    diffId: `sha256:${sha256(layer)}`,
    config,
    createdBy: `quarry e2e/controlplane/node-images.ts (${kind})`,
    name: kind === "pause" ? PAUSE_IMAGE : TOOLS_IMAGE,
  });
}
