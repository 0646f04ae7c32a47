// Go-style durations ("1m", "90s", "1m30s", "500ms"), the format Tekton's
// ConfigMaps and messages use, so Quarry's config keys and messages match.
const UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Milliseconds of a Go duration string; throws on malformed input. */
export function parseDuration(text: string): number {
  const s = text.trim();
  if (s === "0") return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/y;
  let total = 0;
  let pos = 0;
  if (!s) throw new Error(`invalid duration ""`);
  while (pos < s.length) {
    re.lastIndex = pos;
    const m = re.exec(s);
    if (!m) throw new Error(`invalid duration "${text}": expected e.g. "1m", "90s", "1m30s"`);
    total += Number(m[1]) * UNITS[m[2]!]!;
    pos = re.lastIndex;
  }
  return total;
}

/** Formats like Go's time.Duration.String(): 1m0s, 30s, 1h0m0s, 1.5s, 250ms. */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  if (ms < 1000) return `${trim(ms)}ms`;
  let rest = ms / 1000;
  const h = Math.floor(rest / 3600);
  rest -= h * 3600;
  const m = Math.floor(rest / 60);
  rest -= m * 60;
  const sec = `${trim(rest)}s`;
  if (h > 0) return `${h}h${m}m${sec}`;
  if (m > 0) return `${m}m${sec}`;
  return sec;
}

function trim(n: number): string {
  return String(Number(n.toFixed(3)));
}
