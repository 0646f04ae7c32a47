// A line plot (several series, one x and one y axis) as SVG, converted to PNG by rsvg-convert, as
// dev/dashboard draws its picture: a benchmark's own figures without a plotting library.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ticks } from "@quarry/dashboard/render";

export interface PlotSeries {
  label: string;
  color: string;
  points: readonly [number, number][];
  /** draw a dot on every point (few points) */
  markers?: boolean;
}

export interface Plot {
  title: string;
  xLabel: string;
  yLabel: string;
  series: readonly PlotSeries[];
  /** x tick labels instead of numbers (e.g. commit names), by x value */
  xNames?: readonly string[];
}

const W = 760;
const H = 420;
const M = { left: 70, right: 20, top: 62, bottom: 56 };

const esc = (s: string) => s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
const fmt = (v: number) =>
  Math.abs(v) >= 1000 ? `${Math.round(v / 100) / 10}k` : String(Math.round(v * 100) / 100);

function plotSvg(p: Plot): string {
  const all = p.series.flatMap((s) => s.points);
  // named x values get half a step of room either side, so the outer labels fit
  const xMax = p.xNames ? p.xNames.length - 0.5 : Math.max(1e-9, ...all.map(([x]) => x));
  const xMin = p.xNames ? -0.5 : Math.min(0, ...all.map(([x]) => x));
  const yMax = Math.max(1e-9, ...all.map(([, y]) => y)) * 1.05;
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const sx = (x: number) => M.left + ((x - xMin) / (xMax - xMin || 1)) * pw;
  const sy = (y: number) => M.top + ph - (y / yMax) * ph;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="DejaVu Sans, sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${esc(p.title)}</text>`,
  ];
  for (const t of ticks(0, yMax, 5)) {
    out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${sy(t)}" y2="${sy(t)}" stroke="#e3e3e3"/>`);
    out.push(`<text x="${M.left - 6}" y="${sy(t) + 4}" text-anchor="end">${fmt(t)}</text>`);
  }
  const xTicks = p.xNames ? p.xNames.map((_, i) => i) : ticks(xMin, xMax, 6);
  for (const t of xTicks) {
    out.push(`<line x1="${sx(t)}" x2="${sx(t)}" y1="${M.top + ph}" y2="${M.top + ph + 5}" stroke="#555"/>`);
    const label = p.xNames ? (p.xNames[t] ?? "") : fmt(t);
    out.push(`<text x="${sx(t)}" y="${M.top + ph + 18}" text-anchor="middle">${esc(label)}</text>`);
  }
  out.push(
    `<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${M.top + ph}" stroke="#555"/>`,
    `<line x1="${M.left}" x2="${W - M.right}" y1="${M.top + ph}" y2="${M.top + ph}" stroke="#555"/>`,
    `<text x="${M.left + pw / 2}" y="${H - 14}" text-anchor="middle">${esc(p.xLabel)}</text>`,
    `<text transform="translate(16 ${M.top + ph / 2}) rotate(-90)" text-anchor="middle">${esc(p.yLabel)}</text>`,
  );
  p.series.forEach((s, i) => {
    if (s.points.length) {
      const d = s.points
        .map(([x, y], j) => `${j ? "L" : "M"}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`)
        .join(" ");
      out.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2"/>`);
      if (s.markers)
        for (const [x, y] of s.points)
          out.push(`<circle cx="${sx(x)}" cy="${sy(y)}" r="3.5" fill="${s.color}"/>`);
    }
    // the legend in one row between the title and the plot, where no line can cross it
    const lx = M.left + i * 220;
    out.push(
      `<rect x="${lx}" y="38" width="14" height="4" fill="${s.color}"/>`,
      `<text x="${lx + 20}" y="44">${esc(s.label)}</text>`,
    );
  });
  out.push("</svg>");
  return out.join("\n");
}

/** Installs rsvg-convert (Debian's librsvg2-bin) and a font when missing, as the bench needs them. */
function ensureRsvg(): void {
  if (existsSync("/usr/bin/rsvg-convert")) return;
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  execFileSync("apt-get", ["update", "-q"], { env, stdio: "ignore" });
  execFileSync("apt-get", ["install", "-y", "-q", "librsvg2-bin", "fonts-dejavu-core"], {
    env,
    stdio: "ignore",
  });
}

/** Writes the plot as PNG to `file`. */
export function writePlotPng(p: Plot, file: string): void {
  ensureRsvg();
  const dir = mkdtempSync(join(tmpdir(), "quarry-plot-"));
  try {
    const svg = join(dir, "plot.svg");
    writeFileSync(svg, plotSvg(p));
    execFileSync("rsvg-convert", ["--format=png", `--output=${file}`, svg]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
