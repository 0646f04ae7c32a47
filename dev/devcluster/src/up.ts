// Starts the test control plane by hand for debugging and leaves it running
// until Ctrl-C:
//   node dev/devcluster/src/up.ts [--dir /tmp/cp] [--run-crds quarry|tekton|tekton-structural|none]
//                               [--no-tekton-run-crds]   (the same as --run-crds none)
//                               [--node]   (also a real node: containerd, kubelet, kcm, scheduler)
import { parseArgs } from "node:util";
import { RestKubeClient } from "@quarry/kube";
import { startControlPlane } from "./controlplane.ts";
import { installQuarryApi, RUN_CRD_MODES, type RunCrdMode } from "./install.ts";
import { startNode } from "./node.ts";

const { values } = parseArgs({
  options: {
    dir: { type: "string" },
    "run-crds": { type: "string", default: "quarry" },
    "no-tekton-run-crds": { type: "boolean", default: false },
    node: { type: "boolean", default: false },
  },
});
const runCrds = (values["no-tekton-run-crds"] ? "none" : values["run-crds"]) as RunCrdMode;
if (!RUN_CRD_MODES.includes(runCrds)) {
  process.stderr.write(`--run-crds must be one of ${RUN_CRD_MODES.join(", ")}\n`);
  process.exit(2);
}
const cp = await startControlPlane({ dir: values.dir, keep: values.dir !== undefined });
await installQuarryApi(RestKubeClient.fromEnvironment(cp.adminKubeconfig), { runCrds });
const node = values.node
  ? await startNode(cp, { keep: values.dir !== undefined }).catch(async (err: unknown) => {
      await cp.stop();
      throw err;
    })
  : undefined;
process.stdout.write(
  [
    `control plane up; Quarry's CRDs and admission policies installed (run CRDs: ${runCrds}).`,
    `  export KUBECONFIG=${cp.adminKubeconfig}`,
    `  logs: ${cp.dir}/kube-apiserver.log, ${cp.dir}/etcd.log`,
    ...(node
      ? [
          `  node ${node.name} (NotReady, hostNetwork pods only), images ${node.toolsImage} and ${node.pauseImage};`,
          `  its logs: ${node.dir}/{containerd,kubelet,kube-controller-manager,kube-scheduler}.log`,
        ]
      : []),
    "  run a service against it:  QUARRY_SYSTEM_NAMESPACE=default node services/lifecycle-controller/src/main.ts",
    "Ctrl-C stops it.",
    "",
  ].join("\n"),
);
const stop = () =>
  void (async () => {
    await node?.stop();
    await cp.stop();
  })().then(() => process.exit(0));
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
setInterval(() => {}, 1 << 30);
