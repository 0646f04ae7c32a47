// helm for the chart tests and scripts/render-deploy.sh: built once from the Go module proxy by
// scripts/build-helm.sh (cached; flock makes a caller wait for a build already running, as
// dev/devcluster/src/node.ts waits for build-node.sh).
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "@quarry/devcluster/paths";
import yaml from "js-yaml";

export { repoRoot };
export const chartsDir = join(repoRoot, "charts");
export const services = [
  "lifecycle-controller",
  "run-controller",
  "git-resolver",
  "bundle-resolver",
  "cluster-resolver",
  "pipe-resolver",
  "http-resolver",
  "hub-resolver",
] as const;

let cached: string | undefined;
export function helm(): string {
  if (!cached) {
    const out = execFileSync("bash", [join(repoRoot, "scripts", "build-helm.sh")], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    });
    cached = join(out.trim().split("\n").at(-1)!, "helm");
  }
  return cached;
}

export function runHelm(args: string[]): string {
  // stderr piped: helm warns on every symlinked subchart (charts/README.md says why they are links)
  return execFileSync(helm(), args, {
    encoding: "utf8",
    cwd: repoRoot,
    maxBuffer: 64 << 20,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  [key: string]: unknown;
}

/** `helm template` of `charts/<chart>` in `namespace`, parsed; `args` are more flags (--set …). */
export function template(chart: string, args: string[] = [], namespace = "quarry-system"): Manifest[] {
  const out = runHelm(["template", "quarry", join(chartsDir, chart), "--namespace", namespace, ...args]);
  return (yaml.loadAll(out) as (Manifest | null)[]).filter((d): d is Manifest => d !== null);
}

export function find(docs: Manifest[], kind: string, name?: string): Manifest | undefined {
  return docs.find((d) => d.kind === kind && (name === undefined || d.metadata.name === name));
}
