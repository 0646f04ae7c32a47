// Which run flavours a process serves: tekton.dev/v1alpha1 Run, tekton.dev/v1beta1
// CustomRun, or both. An informer on a resource the apiserver does not serve
// never syncs, and nothing starts until every informer has, so serving a
// flavour whose CRD is missing (Run on Tekton Pipelines >= v0.47, or with the
// chart's crds.runs.enabled=false) would leave the process unready for ever.
// QUARRY_RUN_FLAVOURS=auto (the default) asks discovery once at start.
import { isApiError, type KubeClient } from "@quarry/kube";

export type RunFlavour = "Run" | "CustomRun";

const RESOURCES: Record<RunFlavour, { groupVersion: string; plural: string }> = {
  Run: { groupVersion: "tekton.dev/v1alpha1", plural: "runs" },
  CustomRun: { groupVersion: "tekton.dev/v1beta1", plural: "customruns" },
};

/** The resources one group/version serves (its discovery document), [] when it serves none. */
export type Discover = (groupVersion: string) => Promise<string[]>;

/** `auto` (or unset): the flavours whose resource is served; otherwise the comma list, checked. */
export async function runFlavours(setting: string | undefined, discover: Discover): Promise<RunFlavour[]> {
  const text = setting?.trim() || "auto";
  if (text === "auto") {
    const served: RunFlavour[] = [];
    for (const flavour of ["Run", "CustomRun"] as const) {
      const { groupVersion, plural } = RESOURCES[flavour];
      if ((await discover(groupVersion)).includes(plural)) served.push(flavour);
    }
    return served;
  }
  return text.split(",").map((f) => {
    const flavour = f.trim();
    if (flavour !== "Run" && flavour !== "CustomRun")
      throw new Error(`QUARRY_RUN_FLAVOURS: unknown flavour "${flavour}" (use auto, Run, CustomRun or both)`);
    return flavour;
  });
}

/** Discovery through the API client: a group/version the apiserver does not know serves nothing. */
export function discoverWith(client: KubeClient): Discover {
  return async (groupVersion) => {
    try {
      const doc = await client.request<{ resources?: { name: string }[] }>("GET", `/apis/${groupVersion}`);
      return (doc.resources ?? []).map((r) => r.name);
    } catch (err) {
      if (isApiError(err, 404)) return [];
      throw err;
    }
  };
}
