// Reading Prometheus text exposition: a service's /metrics, kube-apiserver's.

function labelsOf(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) out[m[1]!] = m[2]!;
  return out;
}

/** Every sample of `metric` (not of another metric whose name starts with it) whose labels include `match`. */
export function* promSamples(
  text: string,
  metric: string,
  match: Record<string, string> = {},
): Generator<{ labels: Record<string, string>; value: number }> {
  for (const line of text.split("\n")) {
    if (!line.startsWith(metric)) continue;
    const rest = line.slice(metric.length);
    if (!rest.startsWith("{") && !rest.startsWith(" ")) continue;
    const close = rest.startsWith("{") ? rest.lastIndexOf("}") : -1;
    const labels = close < 0 ? {} : labelsOf(rest.slice(1, close));
    if (!Object.entries(match).every(([k, v]) => labels[k] === v)) continue;
    const value = Number(
      rest
        .slice(close + 1)
        .trim()
        .split(" ")[0],
    );
    if (Number.isFinite(value)) yield { labels, value };
  }
}

/** Sum of every sample of `metric` whose labels include `match` (NaN-free; 0 when none). */
export function promSum(text: string, metric: string, match: Record<string, string> = {}): number {
  let sum = 0;
  for (const s of promSamples(text, metric, match)) sum += s.value;
  return sum;
}

/** A histogram's cumulative bucket counts (`le` → count), summed over series whose labels include `match`. */
export function promBuckets(
  text: string,
  metric: string,
  match: Record<string, string> = {},
): Map<number, number> {
  const out = new Map<number, number>();
  for (const { labels, value } of promSamples(text, `${metric}_bucket`, match)) {
    const le = labels.le === "+Inf" ? Number.POSITIVE_INFINITY : Number(labels.le);
    out.set(le, (out.get(le) ?? 0) + value);
  }
  return out;
}

/**
 * The q-quantile (0..1) of the observations between two readings of a
 * cumulative histogram, interpolated linearly inside the bucket (as
 * Prometheus' histogram_quantile does); NaN when there are none.
 */
export function bucketQuantile(before: Map<number, number>, after: Map<number, number>, q: number): number {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((b) => (after.get(b) ?? 0) - (before.get(b) ?? 0));
  const total = counts[counts.length - 1] ?? 0;
  if (total <= 0) return Number.NaN;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (let i = 0; i < bounds.length; i++) {
    const upper = bounds[i]!;
    if (counts[i]! >= rank) {
      if (upper === Number.POSITIVE_INFINITY) return lower; // above the last finite bound
      const inBucket = counts[i]! - below;
      return inBucket > 0 ? lower + ((upper - lower) * (rank - below)) / inBucket : upper;
    }
    lower = upper;
    below = counts[i]!;
  }
  return Number.NaN;
}
