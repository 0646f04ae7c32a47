// Every metric Quarry's services export, by name with its label names, taken from the real code:
// the same registration functions the services call (runtime, resolver SDK, git and bundle
// resolvers, run-controller, lifecycle-controller) record into the real exporter, each instrument once, and the
// Prometheus text it renders is parsed. `instrumentNames` reads the source for every instrument
// created anywhere, so a new metric this file does not exercise fails the test that compares them
// instead of going unnoticed.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { registerBundleMetrics } from "@quarry/bundle-resolver/metrics";
import type { BundleResolver } from "@quarry/bundle-resolver/resolver";
import type { GitCliSource } from "@quarry/git-resolver/engine/git-cli-source";
import { registerGitMetrics } from "@quarry/git-resolver/metrics";
import { repoRoot } from "@quarry/harness/helm";
import type { BucketSet, WorkQueue } from "@quarry/kube";
import { bucketMetrics, skippedEventsMetric, workQueueMetrics } from "@quarry/kube";
import { timedOutCounter } from "@quarry/lifecycle-controller/metrics";
import { setupMetrics } from "@quarry/observability";
import { resolverMetrics } from "@quarry/resolver-sdk/internal";
import { enforcementCounter } from "@quarry/run-controller/metrics";

export interface ExportedMetric {
  /** `# TYPE` of the family: counter, gauge, histogram. */
  type: string;
  /** Label names seen on its samples (`le` on a histogram's buckets). */
  labels: Set<string>;
}

/** Series name (histograms as `_bucket`, `_sum`, `_count`) → its family's type and label names. */
export async function exportedMetrics(): Promise<{ text: string; metrics: Map<string, ExportedMetric> }> {
  const m = setupMetrics("dashboard-test");
  try {
    const queue = { depth: () => 1, unfinishedWork: () => ({ totalSeconds: 2, longestSeconds: 1 }) };
    const sink = workQueueMetrics(m.meter, () => [
      { name: "git-resolver", queue: queue as unknown as WorkQueue },
    ])("git-resolver");
    sink.add();
    sink.retry();
    sink.queueDuration(0.1);
    sink.workDuration(0.2);

    const buckets = {
      count: 2,
      names: ["git-resolver.00-of-02", "git-resolver.01-of-02"],
      holds: (i: number) => i === 0,
      status: () => ({ held: ["git-resolver.00-of-02"], members: 2 }),
    };
    const changes = bucketMetrics(m.meter, buckets as unknown as BucketSet);
    changes.gained();
    changes.lost();
    skippedEventsMetric(m.meter, () => [{ resource: "resolutionrequests", status: () => ({ skipped: 3 }) }]);

    const resolver = resolverMetrics(m.meter);
    resolver.duration("git", "succeeded", 0.3);
    resolver.cache("git", "miss");
    resolver.inflight("git", 1);
    resolver.failure("git", "NotFound");

    const source = {
      cache: { totalBytes: () => 1, repositories: () => 1 },
      stats: {
        fetches: 1,
        blobReads: 1,
        blobFetches: 1,
        blobsFetched: 1,
        repacks: 1,
        refLookups: 1,
        memoryHits: 1,
        accessChecks: 1,
        evictions: 1,
      },
    };
    registerGitMetrics(m.meter, source as unknown as GitCliSource);
    const cache = { size: 1, hits: 1, misses: 1 };
    registerBundleMetrics(m.meter, { manifests: cache, layers: cache } as unknown as BundleResolver);
    enforcementCounter(m.meter)("ControllerNotFound", "CustomRun");
    timedOutCounter(m.meter)("git", "NoResolver");

    const text = await m.render();
    return { text, metrics: parseExposition(text) };
  } finally {
    await m.shutdown();
  }
}

/** Prometheus text format 0.0.4 → series name → family type and label names. */
export function parseExposition(text: string): Map<string, ExportedMetric> {
  const types = new Map<string, string>();
  const out = new Map<string, ExportedMetric>();
  for (const line of text.split("\n")) {
    const t = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (t) types.set(t[1]!, t[2]!);
    if (line === "" || line.startsWith("#")) continue;
    const s = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})? \S+/.exec(line);
    if (!s) throw new Error(`not a sample line: ${line}`);
    const name = s[1]!;
    const family = types.get(name) ?? types.get(name.replace(/_(bucket|sum|count)$/, ""));
    if (!family) throw new Error(`sample ${name} has no # TYPE`);
    const entry = out.get(name) ?? { type: family, labels: new Set<string>() };
    for (const l of (s[2] ?? "").matchAll(/([A-Za-z_]\w*)="/g)) entry.labels.add(l[1]!);
    out.set(name, entry);
  }
  return out;
}

/**
 * Every instrument name the services' code creates: the first argument of the OTel Meter's
 * create* calls, and of queue-metrics.ts's `gauge(name, …)` helper. Returns the files where a
 * create* call's name is not a string literal too, so the caller can insist there are none but
 * the helper.
 */
export function instrumentNames(): { names: Set<string>; nonLiteral: string[] } {
  const names = new Set<string>();
  const nonLiteral: string[] = [];
  for (const file of sourceFiles()) {
    const src = readFileSync(file, "utf8");
    const rel = relative(repoRoot, file);
    for (const m of src.matchAll(
      /\b(create(?:Observable)?(?:Counter|UpDownCounter|Gauge|Histogram))\(\s*([^,)]*)/g,
    )) {
      const literal = /^"([^"]+)"$/.exec(m[2]!.trim());
      if (literal) names.add(literal[1]!);
      else if (!nonLiteral.includes(rel)) nonLiteral.push(rel);
    }
    if (rel === join("libs", "kube", "src", "queue", "queue-metrics.ts")) {
      for (const m of src.matchAll(/\bgauge\(\s*"([^"]+)"/g)) names.add(m[1]!);
    }
  }
  return { names, nonLiteral };
}

/** Non-test TypeScript of the libraries, services and examples (what runs in a service's process). */
function sourceFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name === "node_modules") continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".ts") && !e.name.endsWith(".test.ts")) files.push(p);
    }
  };
  for (const top of ["libs", "services", "examples"]) {
    for (const pkg of readdirSync(join(repoRoot, top))) {
      const src = join(repoRoot, top, pkg, "src");
      try {
        walk(src);
      } catch {} // a package without src/
    }
  }
  return files;
}
