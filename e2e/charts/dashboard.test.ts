// The Grafana dashboard (charts/quarry/dashboards/quarry-fleet.json): every query reads only
// metrics the services export, by labels they carry; its shape is what Grafana and the sidecar
// expect; the umbrella renders it as kube-prometheus-stack's sidecar ConfigMap when asked.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, test } from "node:test";
import { labelNames, labelValuesQuery, metricNames } from "@quarry/dashboard/promql";
import { interpolate, legendOf, rateInterval } from "@quarry/dashboard/render";
import { chartsDir, find, template } from "@quarry/harness/helm";
import { type ExportedMetric, exportedMetrics, instrumentNames } from "./exported-metrics.ts";

const dashboardFile = join(chartsDir, "quarry", "dashboards", "quarry-fleet.json");
const raw = readFileSync(dashboardFile, "utf8");

interface Target {
  expr: string;
  refId: string;
  datasource?: { type: string; uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: Target[];
}
interface Variable {
  name: string;
  type: string;
  query: string | { query: string };
  datasource?: { uid: string };
}
interface Dashboard {
  uid: string;
  panels: Panel[];
  templating: { list: Variable[] };
}
const dashboard = JSON.parse(raw) as Dashboard;
/** Grafana's reference to the datasource variable (a literal, not a template string). */
const DATASOURCE_VAR = ["$", "{datasource}"].join("");

/**
 * Labels a series has in Prometheus besides its own: what a ServiceMonitor scrape attaches
 * (the Prometheus Operator's target labels). The dashboard's variables select by two of them.
 */
const TARGET_LABELS = ["namespace", "service", "pod", "container", "endpoint", "job", "instance"];

/** Exported families the dashboard leaves out on purpose (each is still in the operator guide's table). */
const NOT_ON_DASHBOARD = new Set([
  "target_info", // OTel's resource attributes, not a measurement
  "process_start_time_seconds", // restarts show as gaps and resets in the other panels
  "quarry_bucket_held", // one series per bucket; "Buckets held" sums them per pod
  "quarry_leader_election_members",
  "quarry_workqueue_unfinished_work_seconds", // "Longest running reconcile" is the actionable one
  "quarry_git_cache_repositories",
  "quarry_git_operations_total",
  "quarry_bundle_cache_lookups_total",
  "quarry_resolution_requests_timed_out_total", // alerted on: QuarryResolutionTimeouts (the lifecycle controller's PrometheusRule)
  "quarry_informer_events_skipped_total", // a diagnostic of HA by buckets: grows with traffic, alarms on nothing
]);

/** Every query of the dashboard: panel targets and `label_values` variable queries, with where it is. */
function queries(d: Dashboard): { where: string; expr: string }[] {
  const out: { where: string; expr: string }[] = [];
  for (const p of d.panels)
    for (const t of p.targets ?? []) out.push({ where: `${p.title}/${t.refId}`, expr: t.expr });
  for (const v of d.templating.list) {
    if (v.type !== "query") continue;
    const q = typeof v.query === "string" ? v.query : v.query.query;
    const lv = labelValuesQuery(q);
    assert.ok(lv, `variable ${v.name}: ${q} is not label_values(<selector>, <label>)`);
    out.push({ where: `variable ${v.name}`, expr: lv.selector });
    out.push({ where: `variable ${v.name} (label)`, expr: `x{${lv.label}=""}` });
  }
  return out;
}

/** What is wrong with the dashboard's queries against `exported` (empty: nothing). */
function problems(d: Dashboard, exported: Map<string, ExportedMetric>): string[] {
  const found: string[] = [];
  for (const { where, expr } of queries(d)) {
    const names = metricNames(expr);
    if (where.endsWith("(label)")) {
      // the variable's label must be one the selector's metric carries
      const [label] = labelNames(expr);
      const selector = queries(d).find((q) => q.where === where.replace(" (label)", ""))!.expr;
      const carried = new Set([
        ...TARGET_LABELS,
        ...metricNames(selector).flatMap((n) => [...(exported.get(n)?.labels ?? [])]),
      ]);
      if (!carried.has(label!)) found.push(`${where}: label ${label} is on no series the selector reads`);
      continue;
    }
    if (names.length === 0) found.push(`${where}: no metric name in ${expr}`);
    const labels = new Set(TARGET_LABELS);
    for (const n of names) {
      const m = exported.get(n);
      if (!m) found.push(`${where}: ${n} is exported by no service`);
      else for (const l of m.labels) labels.add(l);
    }
    for (const l of labelNames(expr)) {
      if (!labels.has(l)) found.push(`${where}: label ${l} is on none of ${names.join(", ")}`);
    }
  }
  return found;
}

describe("the PromQL reader the checks rely on", () => {
  test("names metrics, not functions, keywords, labels, durations or variables", () => {
    assert.deepEqual(
      metricNames(
        'histogram_quantile(0.99, sum by (type, le) (rate(quarry_x_bucket{namespace=~"$namespace", outcome=~"a|b"}[$__rate_interval])))',
      ),
      ["quarry_x_bucket"],
    );
    assert.deepEqual(
      metricNames(
        'sum(max by (service) (a_total{s="x"}) - sum by (service) (b)) / on (pod) group_left (c) d offset 5m > bool 1e3',
      ),
      ["a_total", "b", "d"],
    );
    assert.deepEqual(metricNames("sum(increase(e_total[$__range])) and ignoring (x) f unless g"), [
      "e_total",
      "f",
      "g",
    ]);
    assert.deepEqual(metricNames('label_replace(up, "a", "$1", "b", "(.*)")'), ["up"]);
    assert.deepEqual(labelNames('sum by (type, le) (rate(x{namespace=~"$n", outcome!="p"}[1m]))').sort(), [
      "le",
      "namespace",
      "outcome",
      "type",
    ]);
    assert.deepEqual(
      labelValuesQuery('label_values(quarry_buckets_total{namespace=~"$namespace"}, service)'),
      {
        selector: 'quarry_buckets_total{namespace=~"$namespace"}',
        label: "service",
      },
    );
  });
});

describe("dashboard quarry-fleet.json", () => {
  let exported: Map<string, ExportedMetric>;
  before(async () => {
    exported = (await exportedMetrics()).metrics;
  });

  test("the exported names are every instrument the services' code creates", () => {
    const { names, nonLiteral } = instrumentNames();
    // the queue-metrics gauge helper passes its name on; its literals are read separately
    assert.deepEqual(nonLiteral, [join("libs", "kube", "src", "queue", "queue-metrics.ts")]);
    const families = new Set(
      [...exported].map(([n, m]) => (m.type === "histogram" ? n.replace(/_(bucket|sum|count)$/, "") : n)),
    );
    families.delete("target_info");
    assert.deepEqual([...families].sort(), [...names].sort());
    assert.ok(names.size >= 25, `only ${names.size} instruments found: is the source scan broken?`);
  });

  test("every query reads only exported metrics, by labels those metrics carry", () => {
    assert.deepEqual(problems(dashboard, exported), []);
    assert.ok(queries(dashboard).length >= 30);
  });

  test("the check fails on a metric no service exports, and on a label it lacks", () => {
    const broken = structuredClone(dashboard);
    const target = broken.panels.find((p) => p.targets?.length)!.targets![0]!;
    target.expr = target.expr.replace(/quarry_\w+/, "quarry_resolutions_total");
    const byLabel = structuredClone(dashboard);
    const t2 = byLabel.panels.find((p) => p.title === "Queue depth")!.targets![0]!;
    t2.expr = t2.expr.replace("by (controller)", "by (type)");
    assert.match(problems(broken, exported).join("\n"), /quarry_resolutions_total is exported by no service/);
    assert.match(problems(byLabel, exported).join("\n"), /Queue depth\/A: label type is on none of/);
  });

  test("every exported family is on the dashboard, or left out on purpose", () => {
    const shown = new Set(queries(dashboard).flatMap((q) => metricNames(q.expr)));
    for (const [name, m] of exported) {
      const family = m.type === "histogram" ? name.replace(/_(bucket|sum|count)$/, "") : name;
      const onIt = [...shown].some((s) => s === family || s.startsWith(`${family}_`));
      assert.ok(
        onIt || NOT_ON_DASHBOARD.has(family),
        `${family} is neither on the dashboard nor in NOT_ON_DASHBOARD`,
      );
      assert.ok(
        !(onIt && NOT_ON_DASHBOARD.has(family)),
        `${family} is on the dashboard: drop it from NOT_ON_DASHBOARD`,
      );
    }
  });

  test("Grafana's shape: a Prometheus datasource variable every panel uses, namespace and service variables, a tidy grid", () => {
    assert.equal(dashboard.uid, "quarry-fleet");
    const vars = Object.fromEntries(dashboard.templating.list.map((v) => [v.name, v]));
    assert.equal(vars.datasource?.type, "datasource");
    assert.equal(vars.datasource?.query, "prometheus");
    for (const name of ["namespace", "service"]) {
      assert.equal(vars[name]?.type, "query");
      assert.equal(vars[name]?.datasource?.uid, DATASOURCE_VAR);
    }
    const ids = new Set<number>();
    const cells = new Set<string>();
    for (const p of dashboard.panels) {
      assert.ok(!ids.has(p.id), `panel id ${p.id} twice`);
      ids.add(p.id);
      const { x, y, w, h } = p.gridPos;
      assert.ok(x >= 0 && w > 0 && x + w <= 24, `${p.title}: outside the 24-column grid`);
      for (let i = x; i < x + w; i++)
        for (let j = y; j < y + h; j++) {
          assert.ok(!cells.has(`${i},${j}`), `${p.title} overlaps another panel at ${i},${j}`);
          cells.add(`${i},${j}`);
        }
      if (p.type === "row") continue;
      assert.equal(p.datasource?.uid, DATASOURCE_VAR, p.title);
      assert.ok(p.targets?.length, `${p.title}: no query`);
      for (const t of p.targets!) {
        assert.equal(t.datasource?.uid, DATASOURCE_VAR, `${p.title}/${t.refId}`);
        // every series is narrowed by the dashboard's variables
        assert.match(t.expr, /namespace=~"\$namespace", service=~"\$service"/, `${p.title}/${t.refId}`);
      }
    }
  });
});

describe("the umbrella's dashboard ConfigMap", () => {
  test("off by default: deploy/ (the default render) has none", () => {
    assert.equal(find(template("quarry"), "ConfigMap", "quarry-grafana-dashboards"), undefined);
  });

  test("grafanaDashboard.enabled: labelled for kube-prometheus-stack's sidecar, holding the JSON as is", () => {
    const cm = find(
      template("quarry", ["--set=grafanaDashboard.enabled=true"]),
      "ConfigMap",
      "quarry-grafana-dashboards",
    );
    assert.ok(cm);
    const meta = cm.metadata as unknown as {
      namespace: string;
      labels: Record<string, string>;
      annotations?: unknown;
    };
    assert.equal(meta.namespace, "quarry-system");
    assert.equal(meta.labels.grafana_dashboard, "1");
    assert.equal(meta.annotations, undefined);
    assert.deepEqual(Object.keys(cm.data as object), ["quarry-fleet.json"]);
    assert.equal((cm.data as Record<string, string>)["quarry-fleet.json"], raw);
  });

  test("label, labelValue, namespace, labels and annotations follow the sidecar's settings", () => {
    const cm = find(
      template("quarry", [
        "--set=grafanaDashboard.enabled=true",
        "--set=grafanaDashboard.label=dashboards",
        "--set-string=grafanaDashboard.labelValue=quarry",
        "--set=grafanaDashboard.namespace=monitoring",
        "--set=grafanaDashboard.labels.team=ci",
        "--set=grafanaDashboard.annotations.grafana_folder=Quarry",
      ]),
      "ConfigMap",
      "quarry-grafana-dashboards",
    )!;
    const meta = cm.metadata as unknown as {
      namespace: string;
      labels: Record<string, string>;
      annotations: unknown;
    };
    assert.equal(meta.namespace, "monitoring");
    assert.equal(meta.labels.dashboards, "quarry");
    assert.equal(meta.labels.grafana_dashboard, undefined);
    assert.equal(meta.labels.team, "ci");
    assert.deepEqual(meta.annotations, { grafana_folder: "Quarry" });
  });
});

// dev/dashboard/src/render-dashboard.ts draws the operator guide's picture of this dashboard from
// the queries it would send: they must be the queries Grafana would send.
describe("the screenshot renderer's reading of the dashboard", () => {
  const range = { start: 0, end: 720, step: 10, scrape: 10 };

  test("Grafana's macros: $__rate_interval = max($__interval + scrape, 4 × scrape), $__range", () => {
    assert.equal(rateInterval(range), 40);
    assert.equal(rateInterval({ ...range, step: 60 }), 70);
    assert.equal(
      interpolate("rate(x[$__rate_interval]) + increase(y[$__range]) + z[$__interval]", {}, range),
      "rate(x[40s]) + increase(y[720s]) + z[10s]",
    );
  });

  test("multi-value variables become a regex alternation, values escaped; one value stays plain", () => {
    const vars = { namespace: ["quarry-system"], service: ["quarry-a-metrics", "b.c"] };
    assert.equal(
      // $service in its braced form too
      interpolate(
        `x{namespace=~"$namespace", service=~"${DATASOURCE_VAR.replace("datasource", "service")}"}`,
        vars,
        range,
      ),
      'x{namespace=~"quarry-system", service=~"(quarry-a-metrics|b\\\\.c)"}',
    );
  });

  test("every query of the dashboard is left with no Grafana variable", () => {
    const vars = { namespace: ["quarry-system"], service: ["quarry-git-resolver-metrics"] };
    for (const { where, expr } of queries(dashboard)) {
      if (where.startsWith("variable")) continue;
      assert.doesNotMatch(interpolate(expr, vars, range), /\$/, where);
    }
  });

  test("legends from legendFormat, as Grafana writes them", () => {
    assert.equal(legendOf("{{type}} {{ outcome }}", { type: "git", outcome: "failed" }), "git failed");
    assert.equal(legendOf("{{pod}}", {}), "");
    assert.equal(legendOf(undefined, { a: "1" }), '{a="1"}');
  });
});
