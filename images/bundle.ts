// Bundles a deployed, type-stripped service tree's entry in place: src/main.js becomes one
// minified ES module (esbuild) and the modules it imports only at first use become chunks beside
// it (src/chunk-*.js), loaded when first imported. Why: a process that loads ~470 small modules
// touches more of the node binary's pages and keeps every module's source and wrapper, 4-10 MiB
// of RSS more at rest than the same program in one file (docs/performance.md, "Fleet memory").
//
// The rest of the tree stays in the image, and the bundle keeps the unbundled program's meaning:
// - a package imported only at first use (a dynamic import of a package: undici, isomorphic-git,
//   the certificate library) is left out of the bundle and imported from the tree by its path
//   relative to src/, so it still loads only when used;
// - every bundled module's `import.meta.url` still names its own file in the tree, so a runtime
//   `createRequire(import.meta.url)` resolves packages from where the module sits (client-node,
//   the OTLP exporter, ajv) and a module's "am I the entry?" check stays false;
// - a linked source map (src/main.js.map) maps stack traces back to the tree's files for a
//   process started with --enable-source-maps.
// Used by images/Dockerfile and dev/image-builder/src/build-layout.ts after strip-types.ts.
// Usage: node images/bundle.ts <deployed-dir>
import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { build, type Plugin } from "esbuild";

/** `file` as an import specifier relative to `dir` ("./x.js", "../node_modules/..."). */
export function relativeSpecifier(dir: string, file: string): string {
  const path = relative(dir, file).split(sep).join("/");
  return path.startsWith("../") ? path : `./${path}`;
}

/** `code` with each `import.meta.url` replaced by the URL of `specifier` (relative to the bundle). */
export function pinImportMetaUrl(code: string, specifier: string): string {
  return code.replaceAll("import.meta.url", `new URL(${JSON.stringify(specifier)}, import.meta.url).href`);
}

/** Packages imported only at first use stay out of the bundle, imported from the tree. */
function lazyPackagesFromTree(outDir: string): Plugin {
  return {
    name: "quarry-lazy-packages",
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.kind !== "dynamic-import" || args.pluginData === "resolving") return undefined;
        // the workspace's own packages are the program: bundled (chunks where imported lazily)
        if (args.path.startsWith("@quarry/")) return undefined;
        const found = await b.resolve(args.path, {
          kind: args.kind,
          resolveDir: args.resolveDir,
          importer: args.importer,
          pluginData: "resolving",
        });
        if (found.errors.length > 0 || found.external || !found.path.startsWith("/")) return undefined;
        return { path: relativeSpecifier(outDir, found.path), external: true };
      });
    },
  };
}

/** Each module that reads import.meta.url gets its own file's URL, not the bundle's. */
function importMetaUrlOfTree(outDir: string): Plugin {
  return {
    name: "quarry-import-meta-url",
    setup(b) {
      b.onLoad({ filter: /\.m?js$/ }, (args) => {
        const code = readFileSync(args.path, "utf8");
        if (!code.includes("import.meta.url")) return undefined;
        return { contents: pinImportMetaUrl(code, relativeSpecifier(outDir, args.path)), loader: "js" };
      });
    },
  };
}

export interface BundleResult {
  /** the files written into src/, relative to it */
  files: string[];
  /** bytes of JavaScript written (source maps not counted) */
  bytes: number;
}

/** Bundles `<app>/src/main.js` in place (see the header); returns what it wrote. */
export async function bundleTree(app: string): Promise<BundleResult> {
  const src = join(app, "src");
  // a sibling of src/: the source map's paths (relative to where it is written) hold in src/ too
  const staging = mkdtempSync(join(app, ".bundle-"));
  try {
    await build({
      entryPoints: { main: join(src, "main.js") },
      outdir: staging,
      bundle: true,
      splitting: true,
      chunkNames: "chunk-[hash]",
      platform: "node",
      format: "esm",
      target: "node22",
      minify: true,
      legalComments: "none",
      sourcemap: "linked",
      sourcesContent: false,
      // the CommonJS packages inside call require() for Node's builtins and each other
      banner: {
        js: 'import { createRequire as __quarryRequire } from "node:module"; const require = __quarryRequire(import.meta.url);',
      },
      // relative to src/, where the files land, so chunks and entry agree
      plugins: [lazyPackagesFromTree(src), importMetaUrlOfTree(src)],
      logLevel: "warning",
    });
    const files = readdirSync(staging).sort();
    let bytes = 0;
    for (const f of files) {
      if (f.endsWith(".js")) bytes += readFileSync(join(staging, f)).length;
      renameSync(join(staging, f), join(src, f));
    }
    return { files, bytes };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const app = process.argv[2];
  if (!app) throw new Error("usage: node images/bundle.ts <deployed-dir>");
  const { files, bytes } = await bundleTree(app);
  console.log(
    `bundled ${app}/src/main.js: ${files.length} files, ${(bytes / 1e6).toFixed(2)} MB of JavaScript`,
  );
}
