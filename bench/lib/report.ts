// What every benchmark's report says about where it ran: tool versions, the
// machine, the controllers' concurrency.
import { execFileSync } from "node:child_process";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { buildBinaries } from "@quarry/devcluster/controlplane";
import { settingsFromEnv } from "@quarry/kube";
import { type Row, round } from "./stats.ts";

/** The first line of `bin args` (e.g. `git --version`), or "unknown". */
export function versionOf(bin: string, args: string[]): string {
  try {
    return execFileSync(bin, args, { encoding: "utf8" }).split("\n")[0]!.trim();
  } catch {
    return "unknown";
  }
}

export type ControlPlaneVersions = {
  node: string;
  kubeApiserver: string;
  etcd: string;
};

/** Builds the control plane's binaries; Node's, kube-apiserver's and etcd's versions for the report. */
export function controlPlaneVersions(): ControlPlaneVersions {
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

/** The workers per controller the services run with (they inherit this process's environment). */
export const controllerConcurrency = (): string =>
  process.env.QUARRY_CONCURRENCY ?? `${settingsFromEnv({}).concurrency} (default)`;

/** The machine and the control plane's versions, last in every report; `extra` follows Node's version. */
export function machineRows(
  m: { cpus: number; cpuModel: string; memGiB: number } & Record<string, string | number>,
  extra = "",
): Row[] {
  return [
    ["machine", `${m.cpus} × ${m.cpuModel}, ${m.memGiB} GiB, Node ${m.node ?? process.version}${extra}`],
    ["control plane", `${m.kubeApiserver ?? "?"}, ${m.etcd ?? "?"}`],
  ];
}
