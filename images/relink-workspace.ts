// Moves the workspace packages of a `pnpm deploy --legacy` tree out of
// node_modules. Quarry runs its .ts sources with Node's type stripping, which
// refuses files whose real path is under node_modules
// (ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING), and pnpm deploy copies the
// workspace libs into node_modules/.pnpm/@quarry+<name>@file+<path>/. Each is
// moved to <app>/<path> (libs/kube, ...), the store entry becomes a symlink to
// it (Node follows symlinks to the real path, so modules load from outside
// node_modules), and <app>/<path>/node_modules links back to the store entry's
// siblings so the lib still finds its own dependencies.
// Used by images/Dockerfile and dev/image-builder/src/build-layout.ts; no dependencies.
// Usage: node images/relink-workspace.ts <deployed-dir>
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { dirname, join, relative } from "node:path";

/** Relinks every workspace package in `app`; returns the paths they moved to. */
export function relinkWorkspace(app: string): string[] {
  const store = join(app, "node_modules", ".pnpm");
  const moved: string[] = [];
  for (const entry of readdirSync(store)) {
    // "@quarry+kube@file+libs+kube": scope+name @ file+<path with / as +>
    const m = /^(@[^+]+)\+([^@]+)@file\+(.+)$/.exec(entry);
    if (!m) continue;
    const [, scope, name, path] = m as unknown as [string, string, string, string];
    const modules = join(store, entry, "node_modules");
    const pkg = join(modules, scope, name);
    const target = join(app, ...path.split("+"));
    if (existsSync(target)) throw new Error(`${target} exists already; cannot move ${pkg} there`);
    mkdirSync(dirname(target), { recursive: true });
    renameSync(pkg, target);
    symlinkSync(relative(dirname(pkg), target), pkg);
    // pnpm leaves only a .bin of shims there; nothing runs them in an image
    rmSync(join(target, "node_modules"), { recursive: true, force: true });
    symlinkSync(relative(target, modules), join(target, "node_modules"));
    moved.push(relative(app, target));
  }
  return moved;
}

if (import.meta.main) {
  const app = process.argv[2];
  if (!app) throw new Error("usage: node images/relink-workspace.ts <deployed-dir>");
  console.log(`moved out of node_modules: ${relinkWorkspace(app).join(", ") || "nothing"}`);
}
