// What every benchmark's report shares: tool versions, the machine, summaries
// and call counts as text, and a phase's latency over the floor.
import { execFileSync } from "node:child_process";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { buildBinaries } from "@quarry/devcluster/controlplane";
import { round, type Summary } from "./stats.ts";

/** The first line of `bin args` (e.g. `git --version`), or "unknown". */
export function versionOf(bin: string, args: string[]): string {
  try {
    return execFileSync(bin, args, { encoding: "utf8" }).split("\n")[0]!.trim();
  } catch {
    return "unknown";
  }
}

/** Builds the control plane's binaries; Node's, kube-apiserver's and etcd's versions for the report. */
export function controlPlaneVersions(): { node: string; kubeApiserver: string; etcd: string } {
  const binDir = buildBinaries();
  return {
    node: process.version,
    kubeApiserver: versionOf(join(binDir, "kube-apiserver"), ["--version"]),
    etcd: versionOf(join(binDir, "etcd"), ["--version"]),
  };
}

/** The machine for the JSON result, with the versions given. */
export function machineInfo<V extends Record<string, string>>(versions: V) {
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? "unknown",
    memGiB: round(totalmem() / 2 ** 30, 1),
    ...versions,
  };
}

/** A latency summary on one line. */
export const ms = (s: Summary): string =>
  `p50 ${s.p50}  p90 ${s.p90}  p99 ${s.p99}  max ${s.max}  (n=${s.count})`;

/** Counts by key on one line ("none" when empty). */
export const calls = (c: Record<string, number>): string =>
  Object.entries(c)
    .map(([k, v]) => `${k}: ${v}`)
    .join(", ") || "none";

type Percentiles = Pick<Summary, "p50" | "p90" | "p99" | "max">;

/** What a phase's latency adds over a floor's, per percentile (ms). */
export const versus = (lat: Percentiles, floor: Percentiles): Percentiles => ({
  p50: round(lat.p50 - floor.p50, 1),
  p90: round(lat.p90 - floor.p90, 1),
  p99: round(lat.p99 - floor.p99, 1),
  max: round(lat.max - floor.max, 1),
});
