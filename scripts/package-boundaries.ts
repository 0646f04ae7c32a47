// The workspace's package boundaries, for the checks that the product (what
// ships: libs, services, the CLI, the examples, the image definition) never
// reaches into tooling (dev/), tests (e2e/) or benchmarks (bench/), and that
// packages reach one another by name, never by a `../` path across packages.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { tsFiles } from "./import-graph.ts";

/** Folders holding one package per subfolder, and folders that are one package each. */
const PACKAGE_PARENTS = ["libs", "services", "examples", "dev"] as const;
const SINGLE_PACKAGES = ["cli", "images", "e2e", "bench", "scripts"] as const;

/** Packages under these roots only test, measure or run the product: none of it ships. */
export const TOOLING_ROOTS: readonly string[] = ["dev", "e2e", "bench", "scripts"];

/** The package folder (relative to the repo) holding `file` (relative to the repo). */
export function packageDirOf(file: string): string {
  const [top, second] = file.split("/");
  if ((PACKAGE_PARENTS as readonly string[]).includes(top ?? "") && second !== undefined)
    return `${top}/${second}`;
  return top ?? file;
}

export function isTooling(packageDir: string): boolean {
  return TOOLING_ROOTS.includes(packageDir.split("/")[0] ?? "");
}

const isTest = (file: string) => file.endsWith(".test.ts");

export interface PackageInfo {
  dir: string;
  name: string;
  dependencies: readonly string[];
}

/** Every workspace package: its folder, its name, and its (production) dependencies' names. */
export function workspacePackages(repo: string): PackageInfo[] {
  const dirs: string[] = [...SINGLE_PACKAGES];
  for (const parent of PACKAGE_PARENTS) {
    for (const child of readdirSync(join(repo, parent))) dirs.push(`${parent}/${child}`);
  }
  const out: PackageInfo[] = [];
  for (const dir of dirs) {
    const manifest = join(repo, dir, "package.json");
    if (!existsSync(manifest)) continue;
    const json = JSON.parse(readFileSync(manifest, "utf8")) as {
      name: string;
      dependencies?: Record<string, string>;
    };
    out.push({ dir, name: json.name, dependencies: Object.keys(json.dependencies ?? {}) });
  }
  return out;
}

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["']([^"']+)["']/gm;

/**
 * Every module specifier `source` imports, static, dynamic, type-only or
 * re-exported. A line that opens with a quote is data (a test's sample source),
 * not an import.
 */
export function specifiers(source: string): string[] {
  const code = source
    .split("\n")
    .filter((line) => !/^\s*["'`]/.test(line))
    .join("\n");
  return [...new Set([...code.matchAll(SPECIFIER)].map((m) => m[1] ?? ""))].filter((s) => s !== "");
}

/** The workspace package a bare specifier names (`@quarry/kube/testing` → `@quarry/kube`), if any. */
export function packageNameOf(specifier: string): string | undefined {
  const m = /^(@quarry\/[^/]+)/.exec(specifier);
  return m?.[1];
}

export interface Violation {
  file: string;
  imports: string;
  why: string;
}

/**
 * Every import that breaks a boundary: a relative path into another package; a
 * shipped file importing tooling, a test or a benchmark; a product package whose
 * dependencies name a tooling package. Test files of product packages may use
 * tooling (it is a development dependency), but only by package name.
 */
export function boundaryViolations(repo: string): Violation[] {
  const packages = workspacePackages(repo);
  const byName = new Map(packages.map((p) => [p.name, p]));
  const out: Violation[] = [];
  for (const pkg of packages) {
    for (const dep of pkg.dependencies) {
      const target = byName.get(dep);
      if (target && !isTooling(pkg.dir) && isTooling(target.dir))
        out.push({
          file: `${pkg.dir}/package.json`,
          imports: dep,
          why: "a shipped package depends on tooling",
        });
    }
    for (const abs of tsFiles(join(repo, pkg.dir))) {
      const file = relative(repo, abs);
      const shipped = !isTooling(pkg.dir) && !isTest(file);
      for (const spec of specifiers(readFileSync(abs, "utf8"))) {
        if (spec.startsWith(".")) {
          const target = relative(repo, resolve(dirname(abs), spec));
          if (packageDirOf(target) !== pkg.dir)
            out.push({
              file,
              imports: spec,
              why: `reaches into ${packageDirOf(target)} by path; import it by name`,
            });
          else if (shipped && isTest(target))
            out.push({ file, imports: spec, why: "shipped code imports a test" });
          continue;
        }
        const name = packageNameOf(spec);
        const target = name === undefined ? undefined : byName.get(name);
        if (shipped && target && isTooling(target.dir))
          out.push({ file, imports: spec, why: `shipped code imports tooling (${target.dir})` });
      }
    }
  }
  return out;
}
