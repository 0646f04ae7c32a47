// The Grafana dashboard's screenshot in docs/operator-guide.md, from real data and without Grafana
// (none can be installed here): runs Quarry's services against the embedded control plane with a
// varied workload (workload.ts) while a real Prometheus, built from the Go module
// proxy, scrapes their /metrics; then sends every panel's own PromQL from
// charts/quarry/dashboards/quarry-fleet.json to Prometheus's query_range API and draws the results
// (render.ts) to SVG, converted to PNG by rsvg-convert. A manual tool, not a test.
//
//   node dev/dashboard/src/render-dashboard.ts [--minutes 12] [--out docs/images/quarry-fleet-dashboard.png]
//   node dev/dashboard/src/render-dashboard.ts --render-only DIR   # again from the samples a run kept in DIR
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { repoRoot } from "@quarry/devcluster/paths";
import { type Fleet, startFleet } from "./fleet.ts";
import {
  labelValues,
  type PrometheusServer,
  prometheusBinary,
  queryRange,
  startPrometheus,
} from "./prometheus.ts";
import { labelValuesQuery } from "./promql.ts";
import { type Dashboard, evaluate, interpolate, type Range, rateInterval, renderSvg } from "./render.ts";
import { BoundedRun, intFlag, log, sleep } from "./run.ts";
import { type Incident, runWorkload } from "./workload.ts";

const USAGE = `usage: node dev/dashboard/src/render-dashboard.ts [options]
  --minutes N        workload length (default 12), after 30 s of the idle fleet
  --scrape S         Prometheus scrape interval in seconds (default 10)
  --out FILE         the PNG (default docs/images/quarry-fleet-dashboard.png); the SVG goes beside it in DIR
  --data DIR         keep the run's files (Prometheus TSDB, logs, run.json) in DIR (default a temp dir, kept)
  --render-only DIR  skip the run: start Prometheus on DIR's TSDB and draw again (after changing the dashboard or the renderer)
  --width PX         picture width (default 1800)`;

const { values: flags } = parseArgs({
  options: {
    minutes: { type: "string", default: "12" },
    scrape: { type: "string", default: "10" },
    out: { type: "string", default: join(repoRoot, "docs", "images", "quarry-fleet-dashboard.png") },
    data: { type: "string" },
    "render-only": { type: "string" },
    width: { type: "string", default: "1800" },
    help: { type: "boolean", default: false },
  },
});
if (flags.help) {
  console.log(USAGE);
  process.exit(0);
}
const minutes = intFlag("minutes", flags.minutes!, 1, USAGE);
const scrape = intFlag("scrape", flags.scrape!, 1, USAGE);
const width = intFlag("width", flags.width!, 600, USAGE);
const dashboardFile = join(repoRoot, "charts", "quarry", "dashboards", "quarry-fleet.json");
const dashboard = JSON.parse(readFileSync(dashboardFile, "utf8")) as Dashboard;

interface RunRecord {
  start: number;
  end: number;
  scrape: number;
  workloadStart: number;
  incidents: Incident[];
  prometheusVersion: string;
}

const SETTLE_S = 30;
const run = new BoundedRun(minutes * 60 + 900);
const bin = prometheusBinary();
const prometheusVersion = execFileSync(bin, ["--version"], { encoding: "utf8" }).split("\n")[0]!;
log(prometheusVersion);

let fleet: Fleet | undefined;
let prom: PrometheusServer | undefined;
let code = 0;
try {
  let dir: string;
  let record: RunRecord;
  if (flags["render-only"]) {
    dir = resolve(flags["render-only"]);
    record = JSON.parse(readFileSync(join(dir, "run.json"), "utf8")) as RunRecord;
    prom = await startPrometheus({
      bin,
      dir: join(dir, "prometheus"),
      targets: [],
      scrapeInterval: `${record.scrape}s`,
    });
  } else {
    dir = flags.data ? resolve(flags.data) : mkdtempSync(join(tmpdir(), "quarry-dashboard-"));
    mkdirSync(dir, { recursive: true });
    log(`run directory ${dir} (kept: --render-only ${dir} draws it again)`);
    fleet = await startFleet(run, dir);
    const f = fleet;
    prom = await startPrometheus({
      bin,
      dir: join(dir, "prometheus"),
      targets: f.targets(),
      scrapeInterval: `${scrape}s`,
    });
    run.track(prom.pid);
    const p = prom;
    log(`prometheus ${p.url} scraping ${f.targets().length} targets every ${scrape}s`);
    const start = Date.now() / 1000;
    await sleep(SETTLE_S * 1000);
    const workloadStart = Date.now() / 1000;
    const { incidents, endedAt: end } = await runWorkload(f, minutes * 60, run.signal, () =>
      p.setTargets(f.targets()),
    );
    run.signal.throwIfAborted();
    // the picture ends with the workload's last request (its stats show the last busy values)
    record = { start, end, scrape, workloadStart, incidents, prometheusVersion };
    writeFileSync(join(dir, "run.json"), `${JSON.stringify(record, null, 2)}\n`);
    await f.stop();
    fleet = undefined;
  }
  run.finish();
  await draw(prom, dir, record);
} catch (err) {
  code = 1;
  log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
} finally {
  await fleet?.stop();
  await prom?.stop();
}
process.exit(code);

async function draw(p: PrometheusServer, dir: string, rec: RunRecord): Promise<void> {
  const start = Math.floor(rec.start);
  const end = Math.ceil(rec.end);
  const range: Range = { start, end, step: rec.scrape, scrape: rec.scrape };
  // the variables as Grafana would fill them with "All" selected: every value its query returns
  const vars: Record<string, string[]> = {};
  for (const v of dashboard.templating.list) {
    if (v.type !== "query") continue;
    const q = typeof v.query === "string" ? v.query : (v.query as { query: string }).query;
    const lv = labelValuesQuery(q);
    if (!lv) throw new Error(`variable ${v.name}: unsupported query ${q}`);
    // the variables before it, as Grafana chains them
    const selector = interpolate(lv.selector, vars, range);
    vars[v.name] = await labelValues(p.url, lv.label, selector, start, end);
    log(`$${v.name} = ${vars[v.name]!.join(", ")}`);
  }
  const data = await evaluate(dashboard, vars, range, (q) => queryRange(p.url, q, start, end, range.step));
  for (const d of data) {
    if (d.panel.type === "row") continue;
    const empty = d.series.length === 0;
    log(`${empty ? "NO DATA " : ""}${d.panel.title}: ${d.series.length} series`);
  }
  const hhmm = (t: number) => new Date(t * 1000).toISOString().slice(11, 16);
  const day = new Date(start * 1000).toISOString().slice(0, 10);
  const services = vars.service ?? [];
  const svg = renderSvg(dashboard, data, {
    width,
    range,
    timeLabel: hhmm,
    subtitle:
      `Data source: ${rec.prometheusVersion.replace(/^prometheus, version /, "Prometheus ").replace(/ \(.*$/, "")}   ·   ` +
      `Namespace: All (${(vars.namespace ?? []).join(", ")})   ·   Service: All (${services.length})   ·   ` +
      `${day} ${hhmm(start)}–${hhmm(end)} UTC   ·   step ${range.step}s, $__rate_interval ${rateInterval(range)}s`,
    footer:
      "Not a Grafana screenshot: dev/dashboard/src/render-dashboard.ts drew each panel from Prometheus query_range results of the panel's own PromQL, " +
      `scraped from Quarry's services running a varied workload on the embedded control plane (${rec.incidents.map((i) => `${Math.round((i.at + rec.workloadStart - start) / 60)}m ${i.what.replace(/ \(.*\)$/, "")}`).join("; ")}).`,
  });
  const out = resolve(flags.out!);
  mkdirSync(join(out, ".."), { recursive: true });
  const svgFile = join(dir, "dashboard.svg");
  writeFileSync(svgFile, svg);
  if (!existsSync("/usr/bin/rsvg-convert")) {
    throw new Error("rsvg-convert missing: apt-get install librsvg2-bin fonts-dejavu-core");
  }
  execFileSync("rsvg-convert", ["--format=png", `--output=${out}`, svgFile]);
  log(`wrote ${out} (SVG: ${svgFile})`);
}
