// Installs Quarry's API (CRDs and admission policies) and the stand-ins for
// Tekton's CRDs on a control plane, and waits until they are served.
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

async function applyCrds(admin: KubeClient, file: string): Promise<void> {
  const crds = (await applyFile(admin, file)).filter((o) => o.kind === "CustomResourceDefinition");
  for (const { metadata } of crds) {
    await waitUntil(`CRD ${metadata.name} established`, async () => {
      const crd = await admin.get<Crd>(kinds.CustomResourceDefinition!, undefined, metadata.name!);
      return crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
    });
  }
}

export async function installQuarryApi(admin: KubeClient): Promise<void> {
  const dir = join(repoRoot, "libs", "api", "crds");
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .sort();
  // CRDs first: policies reference their resources
  for (const f of files.filter((f) => !f.includes("policy"))) await applyCrds(admin, join(dir, f));
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

/** Schemaless stand-ins for Tekton's CRDs (Task, Pipeline, StepAction). */
export async function installTektonCrds(admin: KubeClient): Promise<void> {
  await applyCrds(admin, join(repoRoot, "e2e", "controlplane", "tekton-crds.yaml"));
}
