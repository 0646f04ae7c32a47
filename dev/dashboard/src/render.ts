// Draws a Grafana dashboard's time-series and stat panels to SVG from the results of its own
// queries, the way Grafana would lay them out (24-column grid, 30 px rows, dark theme), without
// Grafana: each target's PromQL, with the dashboard's variables and Grafana's $__rate_interval,
// $__interval and $__range substituted as Grafana substitutes them, goes to a Prometheus
// query_range, and the series come back as lines, legends and values. Not a Grafana replacement:
// only what quarry-fleet.json uses (timeseries with lines, stat with a sparkline, rows).

export interface Target {
  expr: string;
  legendFormat?: string;
  refId: string;
}
export interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: Target[];
  fieldConfig?: {
    defaults?: {
      unit?: string;
      min?: number;
      decimals?: number;
      thresholds?: { steps: { color: string; value: number | null }[] };
    };
  };
}
export interface Dashboard {
  title: string;
  panels: Panel[];
  templating: { list: { name: string; label?: string; type: string; query: unknown }[] };
}
/** A query_range result: one series' labels and its [unix seconds, value] points. */
export interface Series {
  metric: Record<string, string>;
  values: [number, number][];
}

export interface Range {
  /** unix seconds */
  start: number;
  end: number;
  /** $__interval and the query step, seconds */
  step: number;
  /** the datasource's scrape interval, seconds (Grafana's $__rate_interval uses it) */
  scrape: number;
}

/**
 * Grafana's $__rate_interval: max($__interval + scrape interval, 4 × scrape interval)
 * (grafana.com/docs, "Prometheus template variables").
 */
export function rateInterval(r: Range): number {
  return Math.max(r.step + r.scrape, 4 * r.scrape);
}

/** The query Grafana would send: variables (multi-value as a regex alternation) and interval macros substituted. */
export function interpolate(expr: string, vars: Record<string, string[]>, r: Range): string {
  return expr
    .replaceAll("$__rate_interval", `${rateInterval(r)}s`)
    .replaceAll("$__interval", `${r.step}s`)
    .replaceAll("$__range", `${Math.round(r.end - r.start)}s`)
    .replace(/\$\{(\w+)\}|\$(\w+)/g, (whole, a: string | undefined, b: string | undefined) => {
      const values = vars[(a ?? b)!];
      if (!values) return whole;
      const escaped = values.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, "\\\\$&"));
      return escaped.length === 1 ? escaped[0]! : `(${escaped.join("|")})`;
    });
}

/** A legend as Grafana writes it from legendFormat ({{label}}), or the series' labels. */
export function legendOf(format: string | undefined, metric: Record<string, string>): string {
  if (format) return format.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, l: string) => metric[l] ?? "").trim();
  const labels = Object.entries(metric).map(([k, v]) => `${k}="${v}"`);
  return labels.length ? `{${labels.join(", ")}}` : "value";
}

export interface PanelData {
  panel: Panel;
  series: { name: string; points: [number, number][] }[];
}

/** Runs every target of every panel through `query` (a Prometheus query_range). */
export async function evaluate(
  dash: Dashboard,
  vars: Record<string, string[]>,
  r: Range,
  query: (expr: string) => Promise<Series[]>,
): Promise<PanelData[]> {
  const out: PanelData[] = [];
  for (const panel of dash.panels) {
    const data: PanelData = { panel, series: [] };
    for (const t of panel.targets ?? []) {
      for (const s of await query(interpolate(t.expr, vars, r))) {
        data.series.push({ name: legendOf(t.legendFormat, s.metric), points: s.values });
      }
    }
    data.series.sort((a, b) => a.name.localeCompare(b.name));
    out.push(data);
  }
  return out;
}

// ---- units --------------------------------------------------------------------------------------

function trim(n: number, digits: number): string {
  return Number(n.toFixed(digits)).toString();
}

/** Formats `v` in Grafana's unit `unit` (the few the dashboard uses), with `digits` decimals at most. */
function formatValue(v: number, unit: string | undefined, digits = 2): string {
  if (!Number.isFinite(v)) return "—";
  const scaled = (steps: [number, string][]) => {
    let chosen = steps[0]!;
    for (const s of steps) if (Math.abs(v) >= s[0]) chosen = s;
    return `${trim(v / chosen[0], digits)}${chosen[1]}`;
  };
  switch (unit) {
    case "percentunit":
      return `${trim(v * 100, Math.min(digits, 1))}%`;
    case "s":
      if (v === 0) return "0 s";
      if (Math.abs(v) < 1) return `${trim(v * 1000, v < 0.01 ? 2 : 0)} ms`;
      if (Math.abs(v) < 60) return `${trim(v, digits)} s`;
      return `${trim(v / 60, 1)} min`;
    case "bytes":
      return scaled([
        [1, " B"],
        [1024, " KiB"],
        [1024 ** 2, " MiB"],
        [1024 ** 3, " GiB"],
      ]);
    case "reqps":
      return `${scaled([
        [1, ""],
        [1000, "K"],
      ])} req/s`;
    case "ops":
      return `${scaled([
        [1, ""],
        [1000, "K"],
      ])} ops/s`;
    default:
      return scaled([
        [1, ""],
        [1000, "K"],
        [1e6, "Mil"],
      ]);
  }
}

/** Nice tick values covering [lo, hi]. */
export function ticks(lo: number, hi: number, count = 4): number[] {
  if (!(hi > lo)) hi = lo + 1;
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw)!;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    out.push(Number(v.toPrecision(12)));
  return out;
}

/** Byte ticks on powers of two, as Grafana does for the bytes unit. */
function byteTicks(hi: number): number[] {
  const base = 1024 ** Math.max(0, Math.floor(Math.log(Math.max(hi, 1)) / Math.log(1024)));
  return ticks(0, hi / base).map((t) => t * base);
}

// ---- drawing ------------------------------------------------------------------------------------

const THEME = {
  background: "#111217",
  panel: "#181b1f",
  border: "#2a2d33",
  text: "#ccccdc",
  muted: "#8e8e99",
  grid: "#26292f",
  font: "DejaVu Sans, Inter, Helvetica, Arial, sans-serif",
};
/** Grafana's classic palette, in its order. */
const PALETTE = [
  "#7EB26D",
  "#EAB839",
  "#6ED0E0",
  "#EF843C",
  "#E24D42",
  "#1F78C1",
  "#BA43A9",
  "#705DA0",
  "#508642",
  "#CCA300",
  "#447EBC",
  "#C15C17",
  "#890F02",
  "#0A437C",
  "#6D1F62",
  "#584477",
  "#B7DBAB",
  "#F4D598",
  "#70DBED",
  "#F9BA8F",
];
const NAMED: Record<string, string> = {
  green: "#73BF69",
  orange: "#FF9830",
  red: "#F2495C",
  yellow: "#FADE2A",
};

const esc = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
/** DejaVu Sans is wide: about 0.6 em per character on average. */
const textWidth = (s: string, size: number) => s.length * size * 0.6;

export interface RenderOptions {
  width: number;
  /** Lines under the title: variables, time range. */
  subtitle: string;
  /** What made the picture, at the bottom. */
  footer: string;
  /** Time zone offset label, e.g. "UTC", and a formatter for x-axis times. */
  timeLabel: (unixSeconds: number) => string;
  range: Range;
}

const ROW_PX = 30;
const GAP = 8;
const HEADER = 78;

export function renderSvg(dash: Dashboard, data: PanelData[], o: RenderOptions): string {
  const col = (o.width - GAP) / 24;
  const maxY = Math.max(...dash.panels.map((p) => p.gridPos.y + p.gridPos.h));
  const footer = wrap(o.footer, Math.floor((o.width - 2 * GAP) / textWidth("x", 12)));
  const height = HEADER + maxY * ROW_PX + 16 + footer.length * 17;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${o.width}" height="${height}" viewBox="0 0 ${o.width} ${height}" font-family="${THEME.font}">`,
    `<rect width="100%" height="100%" fill="${THEME.background}"/>`,
    `<text x="${GAP + 4}" y="30" font-size="20" fill="${THEME.text}" font-weight="bold">${esc(dash.title)}</text>`,
    `<text x="${GAP + 4}" y="56" font-size="13" fill="${THEME.muted}">${esc(o.subtitle)}</text>`,
  );
  for (const d of data) {
    const g = d.panel.gridPos;
    const box = {
      x: GAP + g.x * col,
      y: HEADER + g.y * ROW_PX,
      w: g.w * col - GAP,
      h: g.h * ROW_PX - GAP,
    };
    if (d.panel.type === "row") {
      parts.push(
        `<text x="${box.x + 4}" y="${box.y + 20}" font-size="15" font-weight="bold" fill="${THEME.text}">${esc(d.panel.title)}</text>`,
      );
      continue;
    }
    parts.push(
      `<rect x="${box.x}" y="${box.y}" width="${box.w}" height="${box.h}" rx="3" fill="${THEME.panel}" stroke="${THEME.border}"/>`,
      `<text x="${box.x + 10}" y="${box.y + 20}" font-size="13" font-weight="bold" fill="${THEME.text}">${esc(d.panel.title)}</text>`,
    );
    if (d.panel.type === "stat") parts.push(stat(d, box, o));
    else parts.push(timeseries(d, box, o));
  }
  footer.forEach((line, i) => {
    const y = HEADER + maxY * ROW_PX + 14 + i * 17;
    parts.push(`<text x="${GAP + 4}" y="${y}" font-size="12" fill="${THEME.muted}">${esc(line)}</text>`);
  });
  parts.push("</svg>");
  return parts.join("\n");
}

/** Words into lines of at most `max` characters. */
function wrap(text: string, max: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > max) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

type Box = { x: number; y: number; w: number; h: number };

function thresholdColor(p: Panel, v: number): string {
  const steps = p.fieldConfig?.defaults?.thresholds?.steps ?? [{ color: "green", value: null }];
  let color = steps[0]!.color;
  for (const s of steps) if (s.value === null || v >= s.value) color = s.color;
  return NAMED[color] ?? color;
}

function stat(d: PanelData, b: Box, o: RenderOptions): string {
  const unit = d.panel.fieldConfig?.defaults?.unit;
  const decimals = d.panel.fieldConfig?.defaults?.decimals;
  const s = d.series[0];
  const finite = (s?.points ?? []).filter(([, v]) => Number.isFinite(v));
  const last = finite.at(-1)?.[1];
  const out: string[] = [];
  if (last === undefined) {
    out.push(
      `<text x="${b.x + b.w / 2}" y="${b.y + b.h / 2 + 14}" font-size="26" text-anchor="middle" fill="${THEME.muted}">No data</text>`,
    );
    return out.join("");
  }
  const color = thresholdColor(d.panel, last);
  // the sparkline behind the value, as Grafana's graphMode "area"
  if (finite.length > 1) {
    const lo = Math.min(0, ...finite.map(([, v]) => v));
    const hi = Math.max(...finite.map(([, v]) => v), lo + 1e-9);
    const top = b.y + b.h * 0.45;
    const px = (t: number) => b.x + ((t - o.range.start) / (o.range.end - o.range.start)) * b.w;
    const py = (v: number) => b.y + b.h - 2 - ((v - lo) / (hi - lo)) * (b.y + b.h - 2 - top);
    const pts = finite.map(([t, v]) => `${px(t).toFixed(1)},${py(v).toFixed(1)}`);
    out.push(
      `<polygon points="${px(finite[0]![0]).toFixed(1)},${b.y + b.h - 2} ${pts.join(" ")} ${px(finite.at(-1)![0]).toFixed(1)},${b.y + b.h - 2}" fill="${color}" fill-opacity="0.18"/>`,
      `<polyline points="${pts.join(" ")}" fill="none" stroke="${color}" stroke-width="1.5"/>`,
    );
  }
  const text = formatValue(last, unit, decimals ?? 2);
  out.push(
    `<text x="${b.x + b.w / 2}" y="${b.y + b.h / 2 + 16}" font-size="32" font-weight="bold" text-anchor="middle" fill="${color}">${esc(text)}</text>`,
  );
  return out.join("");
}

function timeseries(d: PanelData, b: Box, o: RenderOptions): string {
  const unit = d.panel.fieldConfig?.defaults?.unit;
  const out: string[] = [];
  const series = d.series.filter((s) => s.points.some(([, v]) => Number.isFinite(v)));
  // the legend under the plot, wrapped; what does not fit is counted
  const legendFont = 11;
  const lines: { color: string; name: string; x: number }[][] = [[]];
  let lx = 0;
  const legendW = b.w - 20;
  series.forEach((s, i) => {
    const w = 16 + textWidth(s.name, legendFont) + 14;
    if (lx + w > legendW && lx > 0) {
      lines.push([]);
      lx = 0;
    }
    lines.at(-1)!.push({ color: PALETTE[i % PALETTE.length]!, name: s.name, x: lx });
    lx += w;
  });
  const maxLegendLines = Math.max(1, Math.floor((b.h - 120) / 16));
  const shown = lines.slice(0, maxLegendLines);
  const hidden = lines.slice(maxLegendLines).reduce((n, l) => n + l.length, 0);
  const legendH = series.length ? shown.length * 16 + 4 : 0;

  const plot = { x: b.x + 62, y: b.y + 32, w: b.w - 62 - 12, h: b.h - 32 - 22 - legendH };
  if (series.length === 0) {
    out.push(
      `<text x="${b.x + b.w / 2}" y="${b.y + b.h / 2}" font-size="14" text-anchor="middle" fill="${THEME.muted}">No data</text>`,
    );
    return out.join("");
  }
  const values = series.flatMap((s) => s.points.map(([, v]) => v)).filter(Number.isFinite);
  const min = d.panel.fieldConfig?.defaults?.min ?? Math.min(...values);
  let hi = Math.max(...values);
  if (hi <= min) hi = min + (unit === "percentunit" ? 0.01 : 1);
  const yt = unit === "bytes" ? byteTicks(hi) : ticks(min, hi);
  const top = Math.max(hi, yt.at(-1)!);
  const px = (t: number) => plot.x + ((t - o.range.start) / (o.range.end - o.range.start)) * plot.w;
  const py = (v: number) => plot.y + plot.h - ((v - min) / (top - min)) * plot.h;
  for (const t of yt) {
    const y = py(t);
    out.push(
      `<line x1="${plot.x}" x2="${plot.x + plot.w}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" stroke="${THEME.grid}"/>`,
      `<text x="${plot.x - 6}" y="${(y + 4).toFixed(1)}" font-size="10" text-anchor="end" fill="${THEME.muted}">${esc(formatValue(t, unit, 2))}</text>`,
    );
  }
  const span = o.range.end - o.range.start;
  const xStep =
    [60, 120, 300, 600, 900, 1800, 3600].find((s) => span / s <= Math.max(3, plot.w / 110)) ?? 3600;
  for (let t = Math.ceil(o.range.start / xStep) * xStep; t <= o.range.end; t += xStep) {
    const x = px(t);
    out.push(
      `<line x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${plot.y}" y2="${plot.y + plot.h}" stroke="${THEME.grid}"/>`,
      `<text x="${x.toFixed(1)}" y="${plot.y + plot.h + 14}" font-size="10" text-anchor="middle" fill="${THEME.muted}">${esc(o.timeLabel(t))}</text>`,
    );
  }
  series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length]!;
    // a gap where a point is missing or not a number, as Grafana leaves one (spanNulls off)
    const runs: [number, number][][] = [[]];
    let prev: number | undefined;
    for (const [t, v] of s.points) {
      const gap = prev !== undefined && t - prev > o.range.step * 1.5;
      if (!Number.isFinite(v) || gap) runs.push([]);
      if (Number.isFinite(v)) runs.at(-1)!.push([t, v]);
      prev = t;
    }
    for (const r of runs) {
      if (r.length === 0) continue;
      const pts = r.map(([t, v]) => `${px(t).toFixed(1)},${py(Math.min(v, top)).toFixed(1)}`).join(" ");
      if (r.length === 1) {
        out.push(
          `<circle cx="${px(r[0]![0]).toFixed(1)}" cy="${py(r[0]![1]).toFixed(1)}" r="1.5" fill="${color}"/>`,
        );
        continue;
      }
      const base = py(Math.max(min, 0));
      out.push(
        `<polygon points="${px(r[0]![0]).toFixed(1)},${base.toFixed(1)} ${pts} ${px(r.at(-1)![0]).toFixed(1)},${base.toFixed(1)}" fill="${color}" fill-opacity="0.08"/>`,
        `<polyline points="${pts}" fill="none" stroke="${color}" stroke-width="1.3" stroke-linejoin="round"/>`,
      );
    }
  });
  const ly0 = plot.y + plot.h + 30;
  shown.forEach((line, li) => {
    for (const e of line) {
      const x = b.x + 10 + e.x;
      const y = ly0 + li * 16;
      out.push(
        `<rect x="${x}" y="${y - 8}" width="12" height="3" fill="${e.color}"/>`,
        `<text x="${x + 16}" y="${y - 2}" font-size="${legendFont}" fill="${THEME.text}">${esc(e.name)}</text>`,
      );
    }
  });
  if (hidden > 0) {
    out.push(
      `<text x="${b.x + b.w - 10}" y="${b.y + 20}" font-size="11" text-anchor="end" fill="${THEME.muted}">+${hidden} more series</text>`,
    );
  }
  return out.join("");
}
