// Just enough PromQL to name what a dashboard query reads: the metric names in an expression (not
// functions, keywords, label names, durations or Grafana variables) and the label names it groups
// or matches by. Checked against tricky cases in dashboard.test.ts, so it cannot quietly find nothing.

const KEYWORDS = new Set([
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "bool",
  "and",
  "or",
  "unless",
  "offset",
  "start",
  "end",
  "inf",
  "nan",
]);

const STRING = /"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g;
const GROUPING = /\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g;

/** Metric names an expression selects, in order of appearance, each once. */
export function metricNames(expr: string): string[] {
  let s = expr.replace(STRING, '""');
  s = s.replace(/\{[^{}]*\}/g, " "); // label matchers
  s = s.replace(/\[[^\]]*\]/g, " "); // range and subquery durations
  s = s.replace(GROUPING, " ");
  s = s.replace(/\$\{[^}]*\}|\$\w+/g, " "); // Grafana variables outside brackets
  const names: string[] = [];
  for (const m of s.matchAll(/[A-Za-z_:][\w:]*/g)) {
    const before = s[m.index - 1] ?? "";
    if (/[\d.]/.test(before)) continue; // 1e3, 5m
    if (
      s
        .slice(m.index + m[0].length)
        .trimStart()
        .startsWith("(")
    )
      continue; // a function
    if (KEYWORDS.has(m[0].toLowerCase())) continue;
    if (!names.includes(m[0])) names.push(m[0]);
  }
  return names;
}

/** Label names an expression matches on (`{a="…"}`) or groups by (`by (a, b)`, `on (…)`). */
export function labelNames(expr: string): string[] {
  const s = expr.replace(STRING, '""');
  const names = new Set<string>();
  for (const m of s.matchAll(/\{([^{}]*)\}/g)) {
    for (const l of m[1]!.matchAll(/([A-Za-z_]\w*)\s*(?:=~|!~|!=|=)/g)) names.add(l[1]!);
  }
  for (const m of s.matchAll(GROUPING)) {
    for (const l of m[1]!.split(",")) if (l.trim()) names.add(l.trim());
  }
  return [...names];
}

/** The selector of a Grafana variable query `label_values(<selector>, <label>)`. */
export function labelValuesQuery(query: string): { selector: string; label: string } | undefined {
  const m = /^\s*label_values\((.*),\s*([A-Za-z_]\w*)\s*\)\s*$/.exec(query);
  return m ? { selector: m[1]!, label: m[2]! } : undefined;
}
