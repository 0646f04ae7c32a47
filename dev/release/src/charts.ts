// The charts of a release: a copy of charts/ stamped with the version, the registry and the image
// digests (stamp.ts), each chart packaged and pushed to oci://<registry>/charts, and the umbrella
// rendered into release.yaml (Quarry's CRDs only: for a cluster running Tekton Pipelines) and
// release-with-tekton-crds.yaml (for one without).
import { execFile } from "node:child_process";
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { chartsDir, helm } from "@quarry/harness/helm";
import type { ReleasedImage } from "./images.ts";
import { stampAllInOneDigest, stampChartYaml, stampDigest, stampRegistry } from "./stamp.ts";

const run = promisify(execFile);

export interface ReleasedChart {
  name: string;
  /** oci://registry/charts/<name> */
  ref: string;
  version: string;
  digest: string;
  /** The packaged .tgz. */
  file: string;
}

export const NAMESPACE = "quarry-system";
/** Pushed last: it embeds every other chart. */
const UMBRELLA = "quarry";

/** The chart directories under `dir` (those with a Chart.yaml). */
function chartDirs(dir: string): string[] {
  return readdirSync(dir).filter((d) => existsSync(join(dir, d, "Chart.yaml")));
}

/**
 * charts/ copied to `work`, links between charts kept (they resolve to the stamped copies), links
 * out of charts/ (the CRDs chart's files/) replaced by what they point at.
 */
export function copyCharts(work: string): string {
  const dest = join(work, "charts");
  cpSync(chartsDir, dest, { recursive: true, verbatimSymlinks: true });
  const fixLinks = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) {
        const target = resolve(dirname(path), readlinkSync(path));
        if (!target.startsWith(dest)) {
          const real = realpathSync(join(chartsDir, path.slice(dest.length + 1)));
          rmSync(path);
          cpSync(real, path, { recursive: true, dereference: true });
        }
      } else if (stat.isDirectory()) fixLinks(path);
    }
  };
  fixLinks(dest);
  return dest;
}

function edit(file: string, fn: (text: string) => string): void {
  writeFileSync(file, fn(readFileSync(file, "utf8")));
}

/** Stamps every chart in `charts` for the release. */
export function stampCharts(
  charts: string,
  opts: { version: string; registry: string; images: readonly ReleasedImage[] },
): void {
  for (const chart of chartDirs(charts)) {
    edit(join(charts, chart, "Chart.yaml"), (t) => stampChartYaml(t, opts.version, chart));
    const values = join(charts, chart, "values.yaml");
    if (!existsSync(values)) continue;
    const text = readFileSync(values, "utf8");
    if (/^global:\n/m.test(text) && /^ {2}image:\n/m.test(text))
      edit(values, (t) => stampRegistry(t, opts.registry, chart));
    const image = opts.images.find((i) => i.service === chart);
    if (image) edit(values, (t) => stampDigest(t, image.digest, chart));
    // the umbrella names the all-in-one image too (global.mode=all-in-one)
    const allInOne = opts.images.find((i) => i.service === "all-in-one");
    if (chart === UMBRELLA && allInOne) edit(values, (t) => stampAllInOneDigest(t, allInOne.digest, chart));
  }
  const unstamped = chartDirs(charts).filter((c) => {
    const values = join(charts, c, "values.yaml");
    return (
      existsSync(values) && /^image:\n(?:(?: {2}.*)?\n)*? {2}digest: ""$/m.test(readFileSync(values, "utf8"))
    );
  });
  if (unstamped.length > 0) throw new Error(`no image released for chart(s) ${unstamped.join(", ")}`);
}

/** Packages and pushes every chart; returns them in push order (the umbrella last). */
export async function pushCharts(
  charts: string,
  opts: { registry: string; plainHttp: boolean; out: string },
): Promise<ReleasedChart[]> {
  mkdirSync(opts.out, { recursive: true });
  const names = chartDirs(charts).sort((a, b) => Number(a === UMBRELLA) - Number(b === UMBRELLA));
  const pushed: ReleasedChart[] = [];
  for (const dir of names) {
    const { stdout } = await run(helm(), ["package", join(charts, dir), "--destination", opts.out]);
    const file = /saved it to: (\S+)/.exec(stdout)?.[1];
    if (!file) throw new Error(`helm package ${dir}: ${stdout}`);
    const args = ["push", file, `oci://${opts.registry}/charts`, ...(opts.plainHttp ? ["--plain-http"] : [])];
    const res = await run(helm(), args);
    const text = `${res.stdout}\n${res.stderr}`;
    const ref = /Pushed: (\S+)/.exec(text)?.[1];
    const digest = /Digest: (sha256:[0-9a-f]{64})/.exec(text)?.[1];
    if (!ref || !digest) throw new Error(`helm push ${file} printed no reference and digest: ${text}`);
    const [name, version] = ref.slice(ref.lastIndexOf("/") + 1).split(":");
    pushed.push({
      name: name!,
      ref: `oci://${ref.slice(0, ref.lastIndexOf(":"))}`,
      version: version!,
      digest,
      file,
    });
  }
  return pushed;
}

const NAMESPACE_DOC = `apiVersion: v1
kind: Namespace
metadata:
  name: ${NAMESPACE}
  labels:
    app.kubernetes.io/part-of: quarry
    pod-security.kubernetes.io/enforce: restricted
`;

/** The umbrella rendered as one file to `kubectl apply`, its namespace first. */
export async function renderRelease(charts: string, file: string, tektonCrds: boolean): Promise<void> {
  const { stdout } = await run(
    helm(),
    [
      "template",
      "quarry",
      join(charts, UMBRELLA),
      "--namespace",
      NAMESPACE,
      "--set",
      `crds.tektonPipelinesInstalled=${!tektonCrds}`,
      // helm test's hook belongs to `helm test`, not to an install from a manifest
      "--skip-tests",
    ],
    { maxBuffer: 64 << 20 },
  );
  writeFileSync(file, `${NAMESPACE_DOC}---\n${stdout}`);
}
