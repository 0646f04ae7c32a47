// A real Prometheus server (built from the Go module proxy by scripts/build-prometheus.sh) scraping
// Quarry's services on loopback, and the two HTTP API calls the renderer needs.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "@quarry/devcluster/controlplane";
import { repoRoot } from "@quarry/devcluster/paths";
import type { Series } from "./render.ts";
import { sleep } from "./run.ts";

/** One scrape target: an ops port and the target labels a ServiceMonitor would give its series. */
export interface Target {
  port: number;
  /** job, namespace, service, pod, container, endpoint (Prometheus adds instance itself). */
  labels: Record<string, string>;
}

export interface PrometheusServer {
  url: string;
  /** Replaces the scrape targets (Prometheus picks the file up within seconds). */
  setTargets(targets: Target[]): void;
  pid: number;
  stop(): Promise<void>;
}

/** The cached binary's path; builds it on first use (minutes). */
export function prometheusBinary(): string {
  const out = execFileSync("bash", [join(repoRoot, "scripts", "build-prometheus.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  return join(out.trim().split("\n").at(-1)!, "prometheus");
}

/**
 * Prometheus on 127.0.0.1 with its TSDB in `dir/data` (kept after it stops, so the same samples
 * can be rendered again), scraping every `scrapeInterval` the targets last given to `setTargets`
 * (file-based discovery: replicas come and go as pods would).
 */
export async function startPrometheus(opts: {
  bin: string;
  dir: string;
  targets: Target[];
  scrapeInterval: string;
}): Promise<PrometheusServer> {
  mkdirSync(join(opts.dir, "data"), { recursive: true });
  const targetsFile = join(opts.dir, "targets.json");
  writeTargets(targetsFile, opts.targets);
  const config = {
    global: { scrape_interval: opts.scrapeInterval, evaluation_interval: opts.scrapeInterval },
    // a target's own `job` label wins over the job name (Prometheus sets it only when absent)
    scrape_configs: [{ job_name: "quarry", file_sd_configs: [{ files: [targetsFile] }] }],
  };
  // JSON is YAML: no YAML writer needed
  const configFile = join(opts.dir, "prometheus.yml");
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  const port = await freePort();
  const logFile = join(opts.dir, "prometheus.log");
  const fd = openSync(logFile, "a");
  const child: ChildProcess = spawn(
    opts.bin,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(opts.dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--storage.tsdb.retention.time=30d",
    ],
    { stdio: ["ignore", fd, fd] },
  );
  closeSync(fd);
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`prometheus exited:\n${readFileSync(logFile, "utf8").slice(-2000)}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) throw new Error("prometheus not ready within 60s");
    await sleep(200);
  }
  return {
    url,
    pid: child.pid ?? -1,
    setTargets: (targets) => writeTargets(targetsFile, targets),
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

function writeTargets(file: string, targets: Target[]): void {
  const groups = targets.map((t) => ({ targets: [`127.0.0.1:${t.port}`], labels: t.labels }));
  writeFileSync(`${file}.tmp`, JSON.stringify(groups, null, 2));
  renameSync(`${file}.tmp`, file);
}

async function api<T>(url: string, path: string, params: Record<string, string>): Promise<T> {
  const res = await fetch(`${url}/api/v1/${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(params),
  });
  const body = (await res.json()) as { status: string; data: T; error?: string };
  if (body.status !== "success") throw new Error(`${path} ${JSON.stringify(params)}: ${body.error}`);
  return body.data;
}

/** /api/v1/query_range: a matrix, values parsed (NaN and ±Inf kept as numbers). */
export async function queryRange(
  url: string,
  query: string,
  start: number,
  end: number,
  step: number,
): Promise<Series[]> {
  const data = await api<{
    resultType: string;
    result: { metric: Record<string, string>; values: [number, string][] }[];
  }>(url, "query_range", { query, start: String(start), end: String(end), step: String(step) });
  return data.result.map((r) => ({ metric: r.metric, values: r.values.map(([t, v]) => [t, Number(v)]) }));
}

/** /api/v1/series-backed label values, as Grafana's label_values(<selector>, <label>) asks them. */
export function labelValues(
  url: string,
  label: string,
  selector: string,
  start: number,
  end: number,
): Promise<string[]> {
  const params = new URLSearchParams({ "match[]": selector, start: String(start), end: String(end) });
  return fetch(`${url}/api/v1/label/${label}/values?${params}`)
    .then((r) => r.json() as Promise<{ status: string; data: string[]; error?: string }>)
    .then((b) => {
      if (b.status !== "success") throw new Error(`label values ${label} ${selector}: ${b.error}`);
      return b.data;
    });
}
