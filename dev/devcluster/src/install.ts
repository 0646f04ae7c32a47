// Installs Quarry's API (CRDs and admission policies; the run CRDs as an
// option) and the stand-ins for Tekton's CRDs on a control plane, and waits
// until they are served.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { KubeClient, KubeObject } from "@quarry/kube";
import yaml from "js-yaml";
import { applyFile, applyObject } from "./apply.ts";
import { kindOf, kinds } from "./kinds.ts";
import { repoRoot } from "./paths.ts";
import { waitUntil } from "./wait.ts";

interface Crd extends KubeObject {
  status?: { conditions?: { type: string; status: string }[] };
}

interface CrdSpec extends Crd {
  spec: {
    group: string;
    names: { plural: string; kind: string };
    versions: { name: string; served: boolean }[];
  };
}

/** Applies CRDs and waits until each is established and its watch cache answers (it gives 429 at first). */
async function applyCrds(admin: KubeClient, file: string): Promise<void> {
  const crds = (await applyFile(admin, file)).filter(
    (o) => o.kind === "CustomResourceDefinition",
  ) as CrdSpec[];
  await Promise.all(crds.map((crd) => waitServed(admin, crd)));
}

/** applyCrds for CRD objects already loaded (e.g. Tekton Pipelines' own, tekton.ts). */
export async function applyCrdObjects(admin: KubeClient, crds: KubeObject[]): Promise<void> {
  const applied: CrdSpec[] = [];
  for (const crd of crds) applied.push((await applyObject(admin, crd)) as CrdSpec);
  await Promise.all(applied.map((crd) => waitServed(admin, crd)));
}

async function waitServed(admin: KubeClient, { metadata, spec }: CrdSpec): Promise<void> {
  await waitUntil(`CRD ${metadata.name} established`, async () => {
    const crd = await admin.get<Crd>(kinds.CustomResourceDefinition!, undefined, metadata.name!);
    return crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
  });
  for (const v of spec.versions.filter((x) => x.served)) {
    const rt = {
      group: spec.group,
      version: v.name,
      plural: spec.names.plural,
      kind: spec.names.kind,
      namespaced: true,
    };
    await waitUntil(`${spec.names.plural}.${spec.group}/${v.name} served`, async () => {
      // discovery lags behind Established; clients that discover (the cluster resolver) need it
      const discovery = await admin.request<{ resources: { name: string }[] }>(
        "GET",
        `/apis/${spec.group}/${v.name}`,
      );
      if (!discovery.resources.some((r) => r.name === spec.names.plural)) return false;
      // resourceVersion=0 is served from the watch cache, which answers 429 until it is ready
      await admin.list(rt, undefined, { limit: 1, resourceVersion: "0" });
      return true;
    });
  }
}

/**
 * Which run CRDs (runs.tekton.dev, customruns.tekton.dev) an install puts on the cluster:
 * - "quarry": Quarry's, with full schemas and CEL (libs/api/crds/tekton/), for a cluster without Tekton;
 * - "tekton": stand-ins for Tekton Pipelines' schemaless ones (releases before v0.70), as on a
 *   cluster where Tekton owns them;
 * - "tekton-structural": a stand-in for Tekton's customruns CRD since v0.70, whose structural
 *   schema prunes status fields Tekton does not define (Quarry's childReferences, provenance);
 * - "none": neither.
 */
export type RunCrdMode = "quarry" | "tekton" | "tekton-structural" | "none";
export const RUN_CRD_MODES: readonly RunCrdMode[] = ["quarry", "tekton", "tekton-structural", "none"];

export interface InstallOptions {
  /** Default "quarry". */
  runCrds?: RunCrdMode;
}

const RUN_CRD_FILES: Record<RunCrdMode, string[]> = {
  quarry: ["runs.tekton.dev.yaml", "customruns.tekton.dev.yaml"].map((f) =>
    join(repoRoot, "libs", "api", "crds", "tekton", f),
  ),
  tekton: [join(repoRoot, "dev", "devcluster", "src", "tekton-run-crds.yaml")],
  "tekton-structural": [join(repoRoot, "dev", "devcluster", "src", "tekton-run-crds-structural.yaml")],
  none: [],
};

export async function installQuarryApi(admin: KubeClient, opts: InstallOptions = {}): Promise<void> {
  const dir = join(repoRoot, "libs", "api", "crds");
  // top level only: the optional run CRDs live in a subdirectory
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .sort();
  // CRDs first: policies reference their resources
  for (const f of files.filter((f) => !f.includes("policy"))) await applyCrds(admin, join(dir, f));
  for (const f of files.filter((f) => f.includes("policy"))) await applyFile(admin, join(dir, f));
  await installRunCrds(admin, opts.runCrds ?? "quarry");
}

/**
 * Quarry's shard-label policies (libs/api/crds/shard/), where the apiserver serves
 * MutatingAdmissionPolicy (controlplane.ts turns it on). With `namespace`, bound to that namespace
 * only and named after it (a test's: the policy also makes creates fail for seconds after an
 * apiserver restart, which other tests on the same control plane must not see). Waits until a
 * dry-run create is stamped; returns a function that removes what it installed.
 */
export async function installShardPolicy(
  admin: KubeClient,
  namespace?: string,
): Promise<() => Promise<void>> {
  const served = await admin
    .request<{ resources: { name: string }[] }>("GET", "/apis/admissionregistration.k8s.io/v1beta1")
    .then((d) => d.resources.some((r) => r.name === "mutatingadmissionpolicies"))
    .catch(() => false);
  if (!served)
    throw new Error(
      "the apiserver does not serve admissionregistration.k8s.io/v1beta1 MutatingAdmissionPolicy",
    );
  const file = join(repoRoot, "libs", "api", "crds", "shard", "resolutionrequest-shard-policy.yaml");
  const docs = (yaml.loadAll(readFileSync(file, "utf8")) as KubeObject[]).filter(Boolean);
  const objects = namespace ? docs.map((d) => scopedPolicyObject(d, namespace)) : docs;
  for (const o of objects) await applyObject(admin, o);
  const target = namespace ?? "default";
  const probe = {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: { name: "shard-probe", namespace: target, labels: { "resolution.tekton.dev/type": "cluster" } },
    spec: { params: [] },
  };
  await waitUntil("the shard label stamped at admission", async () => {
    const made = await admin.request<KubeObject>(
      "POST",
      `/apis/resolution.tekton.dev/v1beta1/namespaces/${target}/resolutionrequests`,
      { body: probe, query: { dryRun: "All" } },
    );
    return made.metadata.labels?.["quarry.dev/shard"] !== undefined;
  });
  return async () => {
    for (const o of [...objects].reverse())
      await admin.delete(kindOf(o.kind), undefined, o.metadata.name!).catch(() => undefined);
  };
}

/** A shard policy object renamed after `namespace`, its binding matching that namespace only. */
function scopedPolicyObject(doc: KubeObject, namespace: string): KubeObject {
  const o = structuredClone(doc) as KubeObject & { spec: Record<string, unknown> };
  o.metadata.name = `${o.metadata.name}-${namespace}`;
  if (o.kind?.endsWith("Binding")) {
    o.spec.policyName = `${o.spec.policyName as string}-${namespace}`;
    o.spec.matchResources = {
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } },
    };
  }
  return o;
}

/** Installs one flavour of the run CRDs (see RunCrdMode); "none" installs nothing. */
export async function installRunCrds(admin: KubeClient, mode: RunCrdMode): Promise<void> {
  for (const file of RUN_CRD_FILES[mode]) await applyCrds(admin, file);
}

/** Schemaless stand-ins for Tekton's CRDs (Task, Pipeline, StepAction). */
export async function installTektonCrds(admin: KubeClient): Promise<void> {
  await applyCrds(admin, join(repoRoot, "dev", "devcluster", "src", "tekton-crds.yaml"));
}
