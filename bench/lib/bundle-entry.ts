// A service's image tree as one bundled file (esbuild, ES module, minified): what an image built
// that way would run. A package a service imports only at first use (a dynamic import: undici,
// isomorphic-git, the certificate library) stays out of the bundle and is imported from the tree
// by its absolute path, so it still loads only when used; a runtime createRequire resolves from
// the bundle's folder, as the tree's own src/ files do.
import { join } from "node:path";
import { build, type Plugin } from "esbuild";

const lazyImportsFromTree: Plugin = {
  name: "lazy-imports-from-tree",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.kind !== "dynamic-import" || args.pluginData === "resolving") return undefined;
      const found = await b.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: "resolving",
      });
      return found.errors.length > 0 ? undefined : { path: found.path, external: true };
    });
  },
};

/** Bundles `<tree>/src/main.js` into `<tree>/src/main.bundle.mjs` and returns that file. */
export async function bundleServiceEntry(tree: string): Promise<string> {
  const outfile = join(tree, "src", "main.bundle.mjs");
  await build({
    entryPoints: [join(tree, "src", "main.js")],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    minify: true,
    // the CommonJS packages inside call require() for Node's builtins
    banner: {
      js: 'import { createRequire as __quarryRequire } from "node:module"; const require = __quarryRequire(import.meta.url);',
    },
    plugins: [lazyImportsFromTree],
    logLevel: "warning",
  });
  return outfile;
}
