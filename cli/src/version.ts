// `quarry version` and `--version`: the client's version, read from one
// place (the bundle has it built in; from a checkout, the repository's VERSION
// file), and the fleet's: the app.kubernetes.io/version label the charts put
// on every Quarry Deployment.
import { readFileSync } from "node:fs";
import type { KubeClient, KubeObject, ResourceType } from "@quarry/kube";
import { isApiError } from "@quarry/kube";

/** Set by the bundle build (cli/src/build-bundle.ts); absent when running from a checkout. */
declare const QUARRY_BUNDLED_VERSION: string | undefined;

export function clientVersion(): string {
  if (typeof QUARRY_BUNDLED_VERSION === "string") return QUARRY_BUNDLED_VERSION;
  try {
    return readFileSync(new URL("../../VERSION", import.meta.url), "utf8").trim();
  } catch {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    return pkg.version;
  }
}

export const deployments: ResourceType = {
  group: "apps",
  version: "v1",
  plural: "deployments",
  kind: "Deployment",
  namespaced: true,
};

export interface Deployment extends KubeObject {
  spec?: { replicas?: number };
  status?: { replicas?: number; readyReplicas?: number; availableReplicas?: number };
}

/** The label selector of every Deployment the charts render. */
export const FLEET_SELECTOR = "app.kubernetes.io/part-of=quarry";
const VERSION_LABEL = "app.kubernetes.io/version";

/** Each service's version: `service=version`, sorted; one version for all prints once. */
export interface FleetVersion {
  /** The versions in use, sorted. */
  versions: string[];
  /** namespace/deployment → version ("" when the label is missing). */
  services: Record<string, string>;
}

export function fleetVersionOf(deps: readonly Deployment[]): FleetVersion {
  const services: Record<string, string> = {};
  for (const d of deps)
    services[`${d.metadata.namespace}/${d.metadata.name}`] = d.metadata.labels?.[VERSION_LABEL] ?? "";
  const versions = [...new Set(Object.values(services).filter(Boolean))].sort();
  return { versions, services };
}

/** The Quarry Deployments: cluster-wide, else (no permission to list them all) the system namespace's. */
export async function fleetDeployments(client: KubeClient, systemNamespace: string): Promise<Deployment[]> {
  try {
    return (await client.list<Deployment>(deployments, undefined, { labelSelector: FLEET_SELECTOR })).items;
  } catch (e) {
    if (!isApiError(e, 403)) throw e;
    return (await client.list<Deployment>(deployments, systemNamespace, { labelSelector: FLEET_SELECTOR }))
      .items;
  }
}

/** kubectl's layout: "Client Version: v…" then the server's line. */
export function formatVersion(client: string, fleet: FleetVersion | string | undefined): string {
  const lines = [`Client Version: ${client}`];
  if (fleet === undefined) return `${lines[0]}\n`;
  if (typeof fleet === "string") lines.push(`Fleet Version: unknown (${fleet})`);
  else if (fleet.versions.length === 0)
    lines.push("Fleet Version: none found (no Deployment labelled app.kubernetes.io/part-of=quarry)");
  else if (fleet.versions.length === 1) lines.push(`Fleet Version: ${fleet.versions[0]}`);
  else {
    lines.push(`Fleet Version: mixed (${fleet.versions.join(", ")})`);
    for (const [svc, v] of Object.entries(fleet.services).sort())
      lines.push(`  ${svc}: ${v || "<unlabelled>"}`);
  }
  return `${lines.join("\n")}\n`;
}
