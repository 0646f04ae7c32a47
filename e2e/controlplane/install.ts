// Installs Quarry's API (CRDs and admission policies) on a control plane and
// waits until the CRDs are served.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { type KubeClient, type KubeObject, resolutionRequests } from "@quarry/kube";
import { applyFile } from "../harness/apply.ts";
import { kinds } from "../harness/kinds.ts";
import { repoRoot } from "../harness/paths.ts";
import { waitUntil } from "../harness/wait.ts";

interface Crd extends KubeObject {
  status?: { conditions?: { type: string; status: string }[] };
}

export async function installQuarryApi(admin: KubeClient): Promise<void> {
  const dir = join(repoRoot, "libs", "api", "crds");
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .sort();
  const crds: string[] = [];
  // CRDs first: policies reference their resources
  for (const f of files.filter((f) => !f.includes("policy"))) {
    for (const obj of await applyFile(admin, join(dir, f)))
      if (obj.kind === "CustomResourceDefinition") crds.push(obj.metadata.name!);
  }
  for (const name of crds) {
    await waitUntil(`CRD ${name} established`, async () => {
      const crd = await admin.get<Crd>(kinds.CustomResourceDefinition!, undefined, name);
      return crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
    });
  }
  for (const f of files.filter((f) => f.includes("policy"))) await applyFile(admin, join(dir, f));
  // a new resource's watch cache answers 429 while it initialises; wait it out here once
  await waitUntil("ResolutionRequest watch cache", async () => {
    const abort = new AbortController();
    const events = admin.watch(resolutionRequests, undefined, { timeoutSeconds: 1 }, abort.signal);
    await events.next();
    abort.abort();
    return true;
  });
}
