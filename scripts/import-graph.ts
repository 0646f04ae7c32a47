// The relative-import graph of the product's TypeScript files (the packages
// that ship: libs, services, the CLI, the examples), for the check that no
// two files import each other round a loop. Type-only imports count: a loop
// of types still ties the files' changes together.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

export const PRODUCT_ROOTS = ["libs", "services", "cli", "examples"] as const;

const SKIP_DIRS: ReadonlySet<string> = new Set(["node_modules", "dist", "crds", "testdata"]);

/** Every .ts file under `dir`, tests included (they may close loops too). */
export function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (!SKIP_DIRS.has(name)) out.push(...tsFiles(path));
    } else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

const RELATIVE_SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.{1,2}\/[^"']+)["']/gm;

/** The files `source` (its text at `file`) imports by relative path, resolved to absolute paths. */
export function relativeImports(file: string, source: string): string[] {
  const out = new Set<string>();
  for (const m of source.matchAll(RELATIVE_SPECIFIER)) {
    const spec = m[1];
    if (spec?.endsWith(".ts")) out.add(resolve(dirname(file), spec));
  }
  return [...out];
}

/** The import graph of the files under `roots` (below `repo`), keyed by path relative to `repo`. */
export function importGraph(repo: string, roots: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const root of roots) {
    for (const file of tsFiles(join(repo, root))) {
      const deps = relativeImports(file, readFileSync(file, "utf8")).map((d) => relative(repo, d));
      graph.set(relative(repo, file), deps);
    }
  }
  return graph;
}

/** Every loop in `graph`, each once, as the files round it (the first repeated at the end). */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const cycles: string[][] = [];
  const seen = new Set<string>();
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, "open");
    stack.push(node);
    for (const dep of graph.get(node) ?? []) {
      if (!graph.has(dep)) continue;
      const s = state.get(dep);
      if (s === "open") {
        const loop = stack.slice(stack.indexOf(dep));
        const key = [...loop].sort().join("\n");
        if (!seen.has(key)) {
          seen.add(key);
          cycles.push([...loop, dep]);
        }
      } else if (s === undefined) visit(dep);
    }
    stack.pop();
    state.set(node, "done");
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return cycles;
}
