// e2e runner: one control plane for the whole run, torn down even when tests
// fail or the run is interrupted; each scenario file works in its own namespace.
// When a selected scenario needs a real node (node.ts: needsNode), the node
// starts in the background while the other scenarios run; those come first and
// the node's scenarios wait for it (harness/node.ts: sharedNode).
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { startControlPlane } from "@quarry/devcluster/controlplane";
import {
  installQuarryApi,
  installTektonCrds,
  RUN_CRD_MODES,
  type RunCrdMode,
} from "@quarry/devcluster/install";
import {
  NODE_NAME,
  needsNode,
  PAUSE_IMAGE,
  startNode,
  type TestNode,
  TOOLS_IMAGE,
} from "@quarry/devcluster/node";
import { repoRoot, servicesWithMain } from "@quarry/devcluster/paths";
import { buildTekton } from "@quarry/devcluster/tekton";
import { adminClient } from "@quarry/harness/env";
import { deployServiceTree } from "@quarry/image-builder/build-layout";
import { allInOneFiles, ciAsImageFiles, fleetFiles, RUNNER_MODES, type RunnerMode } from "./modes.ts";

// --in-cluster: the suite in e2e/in-cluster (helm installs Quarry as pods, in each mode its files
// name), against a control plane configured as a real cluster is (ServiceAccount admission on),
// every file on the node. --mode (e2e/modes.ts): which scenario files run in the fleet mode and
// which in all-in-one mode (the services a file starts run as components of one process).
// --as-image: every service a scenario starts runs from its image's tree (type-stripped, src/main.js
// bundled: dev/image-builder's deployServiceTree) instead of its sources.
const args = process.argv.slice(2);
const inCluster = args[0] === "--in-cluster";
if (inCluster) args.shift();
const asImageAt = args.indexOf("--as-image");
const asImage = asImageAt >= 0;
if (asImageAt >= 0) {
  if (inCluster) {
    console.error("--as-image is for the scenarios; the in-cluster files run the images themselves");
    process.exit(2);
  }
  args.splice(asImageAt, 1);
}
let mode: RunnerMode = "ci";
const modeAt = args.indexOf("--mode");
if (modeAt >= 0) {
  const m = args[modeAt + 1] ?? "";
  if (!(RUNNER_MODES as readonly string[]).includes(m) || inCluster) {
    console.error(
      inCluster
        ? "--mode is for the scenarios; the in-cluster files name their mode"
        : `--mode must be one of ${RUNNER_MODES.join(", ")}`,
    );
    process.exit(2);
  }
  mode = m as RunnerMode;
  args.splice(modeAt, 2);
}
const filter = args;
const scenarioDir = join(repoRoot, "e2e", inCluster ? "in-cluster" : "scenarios");
const files = readdirSync(scenarioDir)
  .filter((f) => f.endsWith(".test.ts"))
  .filter((f) => filter.length === 0 || filter.some((p) => f.includes(p)))
  .map((f) => join(scenarioDir, f));
// --as-image with the default mode: e2e/modes.ts's CI_AS_IMAGE set, in the fleet mode
const fleet = inCluster ? files : asImage && mode === "ci" ? ciAsImageFiles(files) : fleetFiles(files, mode);
const allInOne = inCluster || (asImage && mode === "ci") ? [] : allInOneFiles(files, mode);
const selected = [...new Set([...fleet, ...allInOne])];
const nodeFiles = inCluster ? files : selected.filter(needsNode);
// Tekton Pipelines' own controller as Quarry's client (dev/harness/src/tekton.ts) and its resolvers
// beside Quarry's (dev/harness/src/tekton-differential.ts): their build (minutes the first time;
// quarry_setup starts it too) goes on while the other scenarios run, and the scenarios run
// build-tekton.sh again, which waits on the build's lock or reports its error.
const tektonFiles = selected.filter((f) => /^tekton-(interop-|differential)/.test(basename(f)));
if (tektonFiles.length > 0) void buildTekton().catch(() => {});
// node --test starts files in this order: Tekton's and the node's scenarios last, so they rarely
// wait; in each group the fleet mode's files, then the all-in-one mode's
const groups = [
  (f: string) => !nodeFiles.includes(f) && !tektonFiles.includes(f),
  (f: string) => tektonFiles.includes(f) && !nodeFiles.includes(f),
  (f: string) => nodeFiles.includes(f),
];

// Which run CRDs the shared control plane gets: Quarry's by default; "tekton" runs the suite
// against stand-ins for Tekton Pipelines' own (scenarios read the mode from the same variable).
const runCrds = (process.env.QUARRY_E2E_RUN_CRDS ?? "quarry") as RunCrdMode;
if (!RUN_CRD_MODES.includes(runCrds)) {
  console.error(`QUARRY_E2E_RUN_CRDS must be one of ${RUN_CRD_MODES.join(", ")}`);
  process.exit(2);
}

const keep = process.env.QUARRY_E2E_KEEP === "1";
const cp = await startControlPlane({ keep, serviceAccountAdmission: inCluster });
const nodeState = join(cp.dir, "node-state.json");
const abortNode = new AbortController();
let node: Promise<TestNode | undefined> = Promise.resolve(undefined);
if (nodeFiles.length > 0) {
  node = startNode(cp, { keep, signal: abortNode.signal }).then(
    (n) => {
      writeFileSync(
        nodeState,
        JSON.stringify({
          ready: true,
          name: n.name,
          dir: n.dir,
          toolsImage: n.toolsImage,
          pauseImage: n.pauseImage,
          hostAddress: n.hostAddress,
        }),
      );
      return n;
    },
    (err: unknown) => {
      if (!abortNode.signal.aborted) console.error("[node] the test node did not start:", err);
      writeFileSync(nodeState, JSON.stringify({ error: err instanceof Error ? err.message : String(err) }));
      return undefined;
    },
  );
}
let stopping: Promise<void> | undefined;
// the node's pods and processes go before the control plane they talk to
const stop = () =>
  (stopping ??= (async () => {
    abortNode.abort();
    await (await node)?.stop().catch((err: unknown) => console.error("[node] stop:", err));
    await cp.stop();
  })());
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => {
    void stop().then(() => process.exit(130));
  });
}

/** Every service's image tree under `dir` (one at a time: pnpm deploy shares the store); returns `dir`. */
async function deployServiceTrees(dir: string): Promise<string> {
  for (const service of servicesWithMain()) {
    const t0 = Date.now();
    await deployServiceTree(service, join(dir, service));
    console.log(`e2e: ${service}'s image tree in ${Date.now() - t0} ms`);
  }
  return dir;
}

let code = 1;
try {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    QUARRY_E2E_SERVER: cp.server,
    QUARRY_E2E_CA: cp.caFile,
    QUARRY_E2E_DIR: cp.dir,
    QUARRY_E2E_KUBECONFIG: cp.adminKubeconfig,
    QUARRY_E2E_RUN_CRDS: runCrds,
    // the fleet mode unless a file's wrapper says all-in-one
    QUARRY_E2E_MODE: "fleet",
    ...(nodeFiles.length > 0 && {
      QUARRY_E2E_NODE: NODE_NAME,
      QUARRY_E2E_NODE_STATE: nodeState,
      QUARRY_E2E_TOOLS_IMAGE: TOOLS_IMAGE,
      QUARRY_E2E_PAUSE_IMAGE: PAUSE_IMAGE,
    }),
  };
  if (asImage) env.QUARRY_SERVICE_TREES = await deployServiceTrees(join(cp.dir, "service-trees"));
  // in-cluster files install Quarry's API with its chart (quarry-crds)
  if (!inCluster) await installQuarryApi(adminClient({ ...cp }), { runCrds });
  await installTektonCrds(adminClient({ ...cp }));
  // a file in all-in-one mode: a module that sets the mode for its test process, then loads it
  const wrapperDir = join(cp.dir, "all-in-one-mode");
  mkdirSync(wrapperDir, { recursive: true });
  const wrapped = allInOne.map((f) => {
    const wrapper = join(wrapperDir, `${basename(f, ".test.ts")}.all-in-one.test.mjs`);
    writeFileSync(
      wrapper,
      `// ${f} in all-in-one mode (e2e/run.ts)\nprocess.env.QUARRY_E2E_MODE = "all-in-one";\nawait import(${JSON.stringify(pathToFileURL(f).href)});\n`,
    );
    return wrapper;
  });
  const runs = [
    ...fleet.map((file) => ({ file, path: file })),
    ...allInOne.map((file, i) => ({ file, path: wrapped[i]! })),
  ];
  const ordered = groups.flatMap((g) => runs.filter((r) => g(r.file)).map((r) => r.path));
  if (allInOne.length > 0)
    console.log(`e2e: ${fleet.length} files in the fleet mode, ${allInOne.length} in all-in-one mode`);
  // in-cluster files each install the whole of Quarry: one at a time
  const concurrency = process.env.QUARRY_E2E_CONCURRENCY ?? (inCluster ? "1" : "3");
  code = await new Promise<number>((resolve) => {
    const child = spawn(
      process.execPath,
      ["--test", `--test-concurrency=${concurrency}`, "--test-reporter=spec", ...ordered],
      { stdio: "inherit", env },
    );
    child.on("exit", (c) => resolve(c ?? 1));
  });
} catch (err) {
  console.error(err);
} finally {
  if (code !== 0)
    console.error(`e2e failed; control plane logs are in ${cp.dir} only with QUARRY_E2E_KEEP=1`);
  await stop();
}
process.exit(code);
