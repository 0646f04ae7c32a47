// docs/troubleshooting.md has a runbook for every alert the charts ship (each alert's runbook_url
// points at the section whose anchor is the alert's name lower-cased) and for every reason a
// request or a run can end with. The reasons are read from the code that writes them, the alerts
// from the charts' templates, so a new one without a section fails here.
//
// scripts/ is no workspace package (it has no dependencies of its own), so it reads libs/api by
// path, as it reads the charts and the docs.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { QuarryReason, TektonReason } from "../libs/api/src/reasons.ts";
import { RUN_REASONS } from "../libs/api/src/runs.ts";

const REPO = join(import.meta.dirname, "..");
const DOC = "docs/troubleshooting.md";

/** Files under `dir` (relative to the repository), node_modules left out. */
function files(dir: string, keep: (path: string) => boolean): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(REPO, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory() && entry.name !== "node_modules") out.push(...files(path, keep));
    else if (entry.isFile() && keep(path)) out.push(path);
  }
  return out.sort();
}

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

/** The text of every heading (levels 2 to 4) outside code blocks. */
export function headings(markdown: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const m = fenced ? null : /^#{2,4} (.+)$/.exec(line);
    if (m?.[1]) out.push(m[1].replace(/`/g, ""));
  }
  return out;
}

/** Alert names in the charts' templates (`- alert: Name`); values files only add rules users write. */
export function chartAlerts(): string[] {
  const names = new Set<string>();
  for (const path of files("charts", (p) => p.includes("/templates/"))) {
    for (const m of readFileSync(join(REPO, path), "utf8").matchAll(/^\s*-\s*alert:\s*([A-Za-z0-9_]+)/gm)) {
      names.add(m[1] ?? "");
    }
  }
  return [...names].sort();
}

const SUCCESS_OR_PROGRESS = new Set(["Started", "Running", "Succeeded", TektonReason.ResolutionInProgress]);

/**
 * Every reason a request or a run can end with: Tekton's request reasons, Quarry's
 * `quarry.dev/reason` values, Tekton's run reasons per flavour, the `Reason…` constants and
 * literal `reason: "…"` values of the services and SDKs that write a run's condition.
 */
export function terminalReasons(): string[] {
  const reasons = new Set<string>([
    ...Object.values(TektonReason),
    ...Object.values(QuarryReason),
    ...Object.values(RUN_REASONS).flatMap((r) => [r.cancelled, r.timedOut]),
  ]);
  const source = (p: string) => p.endsWith(".ts") && !p.endsWith(".test.ts");
  const writers = [
    ...files("services/run-controller/src", source),
    ...files("libs/customtask-sdk/src", source),
  ];
  for (const path of writers) {
    const text = readFileSync(join(REPO, path), "utf8");
    for (const m of text.matchAll(/export const Reason\w* = "(\w+)"/g)) reasons.add(m[1] ?? "");
    for (const m of text.matchAll(/\breason: "(\w+)"/g)) reasons.add(m[1] ?? "");
  }
  return [...reasons].filter((r) => !SUCCESS_OR_PROGRESS.has(r)).sort();
}

test("anchorOf and headings read a heading as GitHub links to it", () => {
  assert.equal(anchorOf("QuarryBucketUnowned"), "quarrybucketunowned");
  assert.equal(anchorOf("ResolutionFailed on a run"), "resolutionfailed-on-a-run");
  assert.deepEqual(headings("## A\n```sh\n## not one\n```\n### `B` c\n"), ["A", "B c"]);
});

test("the charts' alerts and the code's reasons are found", () => {
  assert.ok(chartAlerts().includes("QuarryBucketUnowned"), chartAlerts().join(", "));
  const reasons = terminalReasons();
  for (const r of [
    "NotFound",
    "ResolutionTimedOut",
    "ControllerNotFound",
    "CustomRunCancelled",
    "InvalidDefinition",
  ]) {
    assert.ok(reasons.includes(r), `${r} in ${reasons.join(", ")}`);
  }
});

test(`${DOC}: a section per alert, its anchor the alert's name lower-cased (the runbook_url)`, () => {
  const anchors = new Set(headings(readFileSync(join(REPO, DOC), "utf8")).map(anchorOf));
  const missing = chartAlerts().filter((alert) => !anchors.has(alert.toLowerCase()));
  assert.deepEqual(missing, [], `alerts without a section headed by their name in ${DOC}`);
});

test(`${DOC}: a section per terminal reason, headed by the reason`, () => {
  const firstWords = new Set(headings(readFileSync(join(REPO, DOC), "utf8")).map((h) => h.split(" ")[0]));
  const missing = terminalReasons().filter((reason) => !firstWords.has(reason));
  assert.deepEqual(missing, [], `reasons without a section in ${DOC}`);
});
