// Reading Prometheus text exposition (a service's /metrics) in tests.

/** Sum of a metric's samples (exact name, e.g. a histogram's `_count`) whose labels include `labels`. */
export function sumMetric(body: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of body.split("\n")) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? ([-+.eE0-9]+|NaN)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const set = m[2] ?? "";
    if (Object.entries(labels).every(([k, v]) => set.includes(`${k}="${v}"`))) sum += Number(m[3]);
  }
  return sum;
}
