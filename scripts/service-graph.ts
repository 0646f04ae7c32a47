// What a service loads at start: the modules its main.ts imports, resolved as the service
// resolves them, and the Node builtins (process.moduleLoadList) they pulled in. main's own top
// level, which starts the service, is left out. Tests use it to keep costly modules out of start.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const SERVICES = join(import.meta.dirname, "..", "services");

const LIST_MODULES = `
import { registerHooks } from "node:module";
const urls = [];
registerHooks({ resolve(spec, ctx, next) { const r = next(spec, ctx); urls.push(r.url); return r; } });
for (const spec of JSON.parse(process.env.SPECIFIERS)) await import(spec);
console.log(JSON.stringify({ urls, builtins: process.moduleLoadList }));
`;

export interface ServiceGraph {
  /** Every module URL resolved while importing main.ts's imports. */
  urls: string[];
  /** Node's process.moduleLoadList afterwards: `NativeModule <id>` for each builtin loaded. */
  builtins: string[];
}

/** The services with a main.ts under services/<name>/src. */
export function servicesWithMain(): string[] {
  return readdirSync(SERVICES).filter((s) => existsSync(join(SERVICES, s, "src", "main.ts")));
}

export function serviceGraph(service: string): ServiceGraph {
  const dir = join(SERVICES, service, "src");
  const specifiers = [
    ...readFileSync(join(dir, "main.ts"), "utf8").matchAll(/^import\s+(?!type\s)[^;]*?from\s*"([^"]+)";/gms),
  ]
    .map((m) => m[1] as string)
    .map((s) => (s.startsWith(".") ? pathToFileURL(join(dir, s)).href : s));
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", LIST_MODULES], {
    cwd: dir,
    encoding: "utf8",
    env: { ...process.env, SPECIFIERS: JSON.stringify(specifiers) },
  });
  return JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as ServiceGraph;
}
