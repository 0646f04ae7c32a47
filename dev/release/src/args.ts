// scripts/release.sh REGISTRY [VERSION] [--out DIR] [--plain-http] [--dockerfile]: what to release
// and where. The version defaults to the repository's VERSION file.

export interface ReleaseArgs {
  /** host[:port][/path] the images go to (under quarry-dev/<service>) and the charts (under charts/). */
  registry: string;
  version: string;
  /** Where the release's files are written (release.yaml, SBOMs, checksums…). */
  out: string;
  /** Talk plain HTTP to the registry (a local test registry). */
  plainHttp: boolean;
  /**
   * Build the images from images/Dockerfile with buildah (scripts/build-dockerfile-images.sh; root,
   * minutes per image) instead of dev/image-builder's equivalent tree.
   */
  dockerfile: boolean;
}

export const USAGE = "usage: scripts/release.sh REGISTRY [VERSION] [--out DIR] [--plain-http] [--dockerfile]";

const SEMVER = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;
const REGISTRY = /^[a-z0-9.-]+(:\d+)?(\/[a-z0-9._-]+)*$/;

export function parseReleaseArgs(argv: readonly string[], defaultVersion: string): ReleaseArgs {
  const positional: string[] = [];
  let out: string | undefined;
  let plainHttp = false;
  let dockerfile = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined || v.startsWith("--")) throw new Error(`${a} needs a value\n${USAGE}`);
      return v;
    };
    if (a === "--out") out = value();
    else if (a === "--plain-http") plainHttp = true;
    else if (a === "--dockerfile") dockerfile = true;
    else if (a.startsWith("--")) throw new Error(`unknown flag ${a}\n${USAGE}`);
    else positional.push(a);
  }
  const [registry, version = defaultVersion, ...rest] = positional;
  if (!registry || rest.length > 0) throw new Error(USAGE);
  if (!REGISTRY.test(registry))
    throw new Error(`registry "${registry}" is not host[:port][/path] (no scheme, lower case)`);
  if (!SEMVER.test(version)) throw new Error(`version "${version}" is not a semantic version (e.g. 1.2.3)`);
  return { registry, version, out: out ?? `dist/release/${version}`, plainHttp, dockerfile };
}
