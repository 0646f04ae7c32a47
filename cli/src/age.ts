// Ages as kubectl prints them (k8s.io/apimachinery/pkg/util/duration.HumanDuration),
// so `quarry get` reads like `kubectl get`: 5s, 119s, 3m12s, 12m, 5h30m, 2d3h, 1y20d.

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const YEAR = 365 * DAY;

/** Human-readable duration of `ms` milliseconds, rounded down like kubectl's. */
export function formatAge(ms: number): string {
  const seconds = Math.trunc(ms / SECOND);
  // kubectl tolerates up to a second of clock skew before calling a time invalid
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(ms / MINUTE);
  if (minutes < 10) return withRest(minutes, "m", seconds % 60, "s");
  if (minutes < 3 * 60) return `${minutes}m`;
  const hours = Math.floor(ms / HOUR);
  if (hours < 8) return withRest(hours, "h", minutes % 60, "m");
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(ms / DAY);
  if (hours < 8 * 24) return withRest(days, "d", hours % 24, "h");
  if (hours < 2 * 365 * 24) return `${days}d`;
  const years = Math.floor(ms / YEAR);
  if (hours < 8 * 365 * 24) return withRest(years, "y", days % 365, "d");
  return `${years}y`;
}

/** Age of an RFC 3339 timestamp at `now`; "<unknown>" when it is missing or unparsable (kubectl's word). */
export function ageSince(timestamp: string | undefined, now: number): string {
  const t = Date.parse(timestamp ?? "");
  return Number.isNaN(t) ? "<unknown>" : formatAge(now - t);
}

function withRest(major: number, majorUnit: string, minor: number, minorUnit: string): string {
  return minor === 0 ? `${major}${majorUnit}` : `${major}${majorUnit}${minor}${minorUnit}`;
}
