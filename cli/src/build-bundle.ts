// Builds the installable `quarry`: one ES module file of plain JavaScript for
// Node >= 20 (no type stripping there), with every dependency inside, so it
// runs without a checkout or node_modules. Usage: node cli/src/build-bundle.ts [OUTFILE]
// (default cli/dist/quarry.mjs). The version it prints comes from the
// repository's VERSION file.
//
// Start-up is the point of the two rewrites below. @kubernetes/client-node is
// needed only for kubeconfigs that @quarry/kube does not read itself (exec
// plugins, auth providers, proxy-url); @quarry/kube loads it by a runtime
// `createRequire`, which a bundle cannot follow. Here it is bundled behind a
// `require` of just the three names that code uses, so the bundle carries the
// KubeConfig and not the whole generated API, and evaluates it only when such
// a kubeconfig is met. Workspace packages and client-node are marked free of
// side effects so that what the CLI does not use is left out.
import { chmodSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";

const cliDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const repoRoot = join(cliDir, "..");

/** The release's version: the repository's VERSION file, else the cli package's own. */
export function releaseVersion(root = repoRoot): string {
  try {
    return readFileSync(join(root, "VERSION"), "utf8").trim();
  } catch {
    const pkg = JSON.parse(readFileSync(join(root, "cli", "package.json"), "utf8")) as { version: string };
    return pkg.version;
  }
}

const CLIENT_NODE = "@kubernetes/client-node";
const CLIENT_NODE_SUBSET = "quarry-bundle:client-node-subset";

const trimDependencies: Plugin = {
  name: "quarry-trim",
  setup(b) {
    // the workspace's packages and client-node: side-effect free, so unused modules drop out
    b.onResolve({ filter: /^(@quarry\/|@kubernetes\/client-node$)/ }, async (args) => {
      if (args.pluginData === "resolved") return undefined;
      const found = await b.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: "resolved",
      });
      return { ...found, sideEffects: false };
    });
    b.onResolve({ filter: /^quarry-bundle:client-node-subset$/ }, () => ({
      path: CLIENT_NODE_SUBSET,
      namespace: "quarry-bundle",
    }));
    b.onLoad({ filter: /.*/, namespace: "quarry-bundle" }, () => ({
      contents: `export { HttpMethod, KubeConfig, RequestContext } from "${CLIENT_NODE}";`,
      // client-node is @quarry/kube's dependency: resolved from there
      resolveDir: join(repoRoot, "libs", "kube"),
      loader: "js",
    }));
    // @quarry/kube's two ways of reaching client-node: a runtime require and a dynamic import
    b.onLoad({ filter: /libs\/kube\/src\/client\/(library-connection|client)\.ts$/ }, (args) => {
      const source = readFileSync(args.path, "utf8");
      const contents = source
        .replace(`createRequire(import.meta.url)("${CLIENT_NODE}")`, `require("${CLIENT_NODE_SUBSET}")`)
        .replace(`import("${CLIENT_NODE}")`, `import("${CLIENT_NODE_SUBSET}")`);
      return { contents, loader: "ts" };
    });
  },
};

export async function buildBundle(outfile = join(cliDir, "dist", "quarry.mjs")): Promise<string> {
  mkdirSync(dirname(outfile), { recursive: true });
  await build({
    entryPoints: [join(cliDir, "src", "main.ts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    minify: true,
    legalComments: "none",
    logLevel: "warning",
    define: { QUARRY_BUNDLED_VERSION: JSON.stringify(releaseVersion()) },
    banner: {
      // bundled CommonJS dependencies call require(); an ES module has none of its own (the
      // entry's own #!/usr/bin/env node line stays first)
      js: [
        'import { createRequire as __quarryRequire } from "node:module";',
        "const require = __quarryRequire(import.meta.url);",
      ].join("\n"),
    },
    plugins: [trimDependencies],
  });
  chmodSync(outfile, 0o755);
  return outfile;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = await buildBundle(process.argv[2]);
  process.stdout.write(`${out}\n`);
}
