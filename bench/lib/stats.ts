// Summary statistics for benchmark samples, and their text: tables, one-line summaries, counts.

export interface Summary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentile (p in 0..100) of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    count: sorted.length,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
  };
}

/** The median of the finite values (the mean of the middle two for an even count); NaN if none. */
export function median(xs: readonly number[]): number {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return Number.NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Rounds to `digits` decimals (for JSON and tables). */
export function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export function roundSummary(s: Summary, digits = 1): Summary {
  return {
    count: s.count,
    mean: round(s.mean, digits),
    p50: round(s.p50, digits),
    p90: round(s.p90, digits),
    p99: round(s.p99, digits),
    max: round(s.max, digits),
  };
}

/** A two-column text table. */
export function table(rows: readonly (readonly [string, string])[]): string {
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `  ${k.padEnd(w)}  ${v}`).join("\n");
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

export type Row = [string, string];
