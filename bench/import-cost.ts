// What importing costs: for every npm dependency of the fleet's packages (the services' own and
// their workspace libs'), a fresh Node process's RSS and V8 heap after importing it alone; and for
// every service, after importing its main module's imports (its whole module graph, main.ts's own
// top level, which starts the service, left out), with the npm packages that graph loaded. Each
// figure is the median of --runs processes with the charts' NODE_OPTIONS, after two full GCs;
// "bare" is the same process importing nothing. --as-image measures the services' graphs in their
// images' trees (pnpm deploy, relinked, type-stripped to .js, as bench/fleet-memory.ts --as-image);
// else from the sources, which adds Node's type stripper (~17-19 MiB) to every service row.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { repoRoot } from "@quarry/devcluster/paths";
import { SERVICE_NODE_OPTIONS } from "@quarry/devcluster/service";
import { deployServiceTree } from "@quarry/image-builder/build-layout";
import { onePhase, runBenchmark } from "./lib/benchmark.ts";
import { log } from "./lib/run.ts";
import { median, round } from "./lib/stats.ts";
import { columns, valueReport } from "./lib/value-rows.ts";

/** The fleet's services, and the all-in-one process that runs them all. */
const FLEET = [
  "lifecycle-controller",
  "cluster-resolver",
  "git-resolver",
  "bundle-resolver",
  "pipe-resolver",
  "run-controller",
  "http-resolver",
  "hub-resolver",
  "all-in-one",
] as const;

/** What one child process reports. */
interface Sample {
  rssMiB: number;
  heapMiB: number;
  /** npm packages the imports loaded, by name */
  packages: string[];
  /** modules resolved (ESM and CommonJS) */
  modules: number;
}

// The child: records every module resolved (sync hooks see import and require alike), imports the
// specifiers given, collects garbage twice and reports. Bare specifiers resolve from its cwd.
const CHILD = `
import { registerHooks } from "node:module";
const urls = new Set();
registerHooks({ resolve(spec, ctx, next) { const r = next(spec, ctx); urls.add(r.url); return r; } });
for (const spec of JSON.parse(process.env.IMPORT_COST_SPECIFIERS)) await import(spec);
globalThis.gc(); globalThis.gc();
await new Promise((r) => setTimeout(r, 50));
const m = process.memoryUsage();
const packages = new Set();
for (const u of urls) {
  const p = /node_modules\\/((?:@[^/]+\\/)?[^/@][^/]*)\\/(?!.*node_modules\\/)/.exec(u);
  if (p) packages.add(p[1]);
}
console.log(JSON.stringify({ rssMiB: m.rss / 1048576, heapMiB: m.heapUsed / 1048576, packages: [...packages].sort(), modules: urls.size }));
`;

function sample(cwd: string, specifiers: readonly string[]): Sample {
  const out = execFileSync(process.execPath, ["--expose-gc", "--input-type=module", "-e", CHILD], {
    cwd,
    encoding: "utf8",
    env: {
      PATH: process.env.PATH,
      NODE_OPTIONS: process.env.QUARRY_SERVICE_NODE_OPTIONS ?? SERVICE_NODE_OPTIONS,
      IMPORT_COST_SPECIFIERS: JSON.stringify(specifiers),
    },
  });
  return JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as Sample;
}

/** The median of `runs` samples' figures; packages and modules from the first. */
function measure(runs: number, cwd: string, specifiers: readonly string[]): Sample {
  const all = Array.from({ length: runs }, () => sample(cwd, specifiers));
  return {
    rssMiB: round(median(all.map((s) => s.rssMiB)), 1),
    heapMiB: round(median(all.map((s) => s.heapMiB)), 1),
    packages: all[0]?.packages ?? [],
    modules: all[0]?.modules ?? 0,
  };
}

interface Manifest {
  dependencies?: Record<string, string>;
}
const manifest = (dir: string) => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;

/** A workspace package's directory: libs/<name>, or services/<name> for a service. */
const workspaceDir = (name: string) =>
  existsSync(join(repoRoot, "libs", name)) ? join(repoRoot, "libs", name) : join(repoRoot, "services", name);

/** Each npm dependency of `service` and its workspace libs (transitively) → a package dir declaring it. */
function npmDependencies(service: string, into: Map<string, string>): void {
  const seen = new Set<string>();
  const visit = (dir: string) => {
    if (seen.has(dir)) return;
    seen.add(dir);
    for (const name of Object.keys(manifest(dir).dependencies ?? {})) {
      // a workspace lib, or a service another one hosts (the all-in-one process runs every service's code)
      if (name.startsWith("@quarry/")) visit(workspaceDir(name.slice("@quarry/".length)));
      else if (!into.has(name)) into.set(name, dir);
    }
  };
  visit(join(repoRoot, "services", service));
}

/** main's value imports (not `import type`), as specifiers a process in `dir` can import. */
function mainImports(main: string, dir: string): string[] {
  const source = readFileSync(main, "utf8");
  const out: string[] = [];
  for (const m of source.matchAll(/^import\s+(?!type\s)[^;]*?from\s*"([^"]+)";/gms)) {
    const spec = m[1]!;
    out.push(spec.startsWith(".") ? pathToFileURL(join(dir, spec)).href : spec);
  }
  return out;
}

await runBenchmark({
  name: "import-cost",
  about:
    "RSS and heap of a fresh Node process after importing each npm dependency alone, and each service's module graph.",
  deadline: 900,
  flags: {
    runs: { type: "int", default: 3, min: 1, help: "processes per figure (the median is reported)" },
    "as-image": {
      type: "boolean",
      help: "import each service's graph from its image's tree (type-stripped .js, before the bundle step), not its sources",
    },
    services: { type: "string", default: FLEET.join(","), help: "comma-separated services to measure" },
  },

  async setup(ctx) {
    const services = ctx.flags.services.split(",").filter(Boolean);
    const workDir = mkdtempSync(join(tmpdir(), "bench-import-cost-"));
    ctx.defer(() => rmSync(workDir, { recursive: true, force: true }));
    const entries = new Map<string, { dir: string; main: string }>();
    for (const name of services) {
      if (ctx.flags["as-image"]) {
        log(`pnpm deploy ${name}, relinked and type-stripped (not bundled: main.js's imports are the graph)`);
        await deployServiceTree(name, join(workDir, name), { bundle: false });
        const dir = join(workDir, name, "src");
        entries.set(name, { dir, main: join(dir, "main.js") });
      } else {
        const dir = join(repoRoot, "services", name, "src");
        entries.set(name, { dir, main: join(dir, "main.ts") });
      }
    }
    const deps = new Map<string, string>();
    for (const name of services) npmDependencies(name, deps);
    return { services, entries, deps };
  },

  phases: (ctx, { entries, deps }) =>
    onePhase("imports", async () => {
      const runs = ctx.flags.runs;
      const bare = measure(runs, repoRoot, []);
      log(`bare node: ${bare.rssMiB} MiB`);
      const libraries = [...deps]
        .sort(([a], [b]) => a.localeCompare(b))
        .flatMap(([name, dir]) => {
          if (ctx.signal.aborted) return [];
          try {
            const s = measure(runs, dir, [name]);
            log(`${name}: ${s.rssMiB} MiB`);
            return [{ name, ...s }];
          } catch (err) {
            log(`${name}: not importable alone (${String(err).split("\n")[0]})`);
            return [];
          }
        });
      const services = [...entries].flatMap(([name, { dir, main }]) => {
        if (ctx.signal.aborted) return [];
        const s = measure(runs, dir, mainImports(main, dir));
        log(`${name}: ${s.rssMiB} MiB, ${s.modules} modules`);
        return [{ name, ...s }];
      });
      return { bare, libraries, services };
    }),

  result: (ctx, _s, [m]) => {
    if (!m) throw new Error("nothing was measured");
    return {
      benchmark: "import-cost",
      date: new Date().toISOString(),
      node: process.version,
      nodeOptions: process.env.QUARRY_SERVICE_NODE_OPTIONS ?? SERVICE_NODE_OPTIONS,
      asImage: ctx.flags["as-image"] === true,
      runs: ctx.flags.runs,
      bare: { rssMiB: m.bare.rssMiB, heapMiB: m.bare.heapMiB },
      libraries: m.libraries.map((l) => ({
        ...l,
        rssOverBareMiB: round(l.rssMiB - m.bare.rssMiB, 1),
      })),
      services: m.services.map((s) => ({ ...s, rssOverBareMiB: round(s.rssMiB - m.bare.rssMiB, 1) })),
    };
  },

  report(r) {
    type Row = { name: string; rssMiB: number; rssOverBareMiB: number; heapMiB: number; modules: number };
    const lib = columns<Row>(
      [
        ["import", (x) => x.name],
        ["RSS MiB", (x) => x.rssMiB],
        ["over bare", (x) => x.rssOverBareMiB],
        ["heap MiB", (x) => x.heapMiB],
        ["modules", (x) => x.modules],
      ],
      [...r.libraries, ...r.services.map((s) => ({ ...s, name: `service: ${s.name}` }))],
    );
    const loaded = r.services.map((s) => [`  ${s.name}`, s.packages.join(" ")] as const);
    return valueReport(
      [
        [
          "import-cost",
          `Node ${r.node}, NODE_OPTIONS "${r.nodeOptions}", median of ${r.runs}, services ${r.asImage ? "as their images run them" : "from the sources"}`,
        ],
        ["bare node", `${r.bare.rssMiB} MiB RSS, ${r.bare.heapMiB} MiB heap`],
        ["npm packages each service's graph loads", ""],
        ...loaded,
      ],
      lib.header,
      lib.rows,
    );
  },

  ok: (r) => r.services.length > 0,
});
