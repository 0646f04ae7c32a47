// Starts the test control plane by hand for debugging and leaves it running
// until Ctrl-C:  node e2e/controlplane/up.ts [--dir /tmp/cp]
import { parseArgs } from "node:util";
import { adminClient } from "../harness/env.ts";
import { startControlPlane } from "./controlplane.ts";
import { installQuarryApi } from "./install.ts";

const { values } = parseArgs({ options: { dir: { type: "string" } } });
const cp = await startControlPlane({ dir: values.dir, keep: values.dir !== undefined });
await installQuarryApi(adminClient({ ...cp }));
process.stdout.write(
  [
    "control plane up; Quarry's CRDs and admission policies installed.",
    `  export KUBECONFIG=${cp.adminKubeconfig}`,
    `  logs: ${cp.dir}/kube-apiserver.log, ${cp.dir}/etcd.log`,
    "  run a service against it:  QUARRY_SYSTEM_NAMESPACE=default node services/lifecycle-controller/src/main.ts",
    "Ctrl-C stops it.",
    "",
  ].join("\n"),
);
const stop = () => void cp.stop().then(() => process.exit(0));
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
setInterval(() => {}, 1 << 30);
