// The hub resolver's e2e world: the lifecycle controller and the hub resolver
// as real processes under their shipped RBAC, and hub protocol fixtures
// (hub-fixture.ts) on loopback that the tests fill and read.
import { after, before } from "node:test";
import type { ResolutionRequest } from "@quarry/api";
import { type HubFixture, startHubFixture } from "./hub-fixture.ts";
import {
  createRequest,
  finished,
  newRequest,
  type Scenario,
  setConfig,
  useScenario,
  waitForRequest,
} from "./scenario.ts";

export const HUB_LABELS = { "resolution.tekton.dev/type": "hub" };

export interface HubWorld {
  scn: Scenario;
  /** The fixtures, in the order of `addresses`. */
  hubs: HubFixture[];
}

export interface HubScenarioOptions {
  /** One fixture per address (default one on 127.0.0.1). */
  addresses?: string[];
  /** hubresolver-config, written before the resolver starts; a function sees the fixtures. */
  config?: (hubs: HubFixture[]) => Record<string, string>;
  /** The resolver's env (ARTIFACT_HUB_API, TEKTON_HUB_API); a function sees the fixtures. */
  env?: (hubs: HubFixture[]) => Record<string, string>;
  /** Fills the fixtures before the services start. */
  setup?: (hubs: HubFixture[]) => void;
}

export function useHubScenario(prefix: string, opts: HubScenarioOptions = {}): () => HubWorld {
  const hubs: HubFixture[] = [];
  before(async () => {
    for (const address of opts.addresses ?? ["127.0.0.1"]) hubs.push(await startHubFixture({ address }));
    opts.setup?.(hubs);
  });
  after(() => Promise.all(hubs.map((h) => h.close())));
  const scenario = useScenario(prefix, {
    start: ["lifecycle-controller"],
    setup: async (scn) => {
      if (opts.config) await setConfig(scn, "hubresolver-config", opts.config(hubs));
      await scn.start("hub-resolver", opts.env?.(hubs) ?? {});
    },
  });
  return () => ({ scn: scenario(), hubs });
}

/** Creates a hub request with `params` and waits for it to finish either way. */
export async function hubOutcome(
  scn: Scenario,
  name: string,
  params: Record<string, string>,
): Promise<ResolutionRequest> {
  await createRequest(scn.admin, newRequest(scn.namespace, name, HUB_LABELS, params));
  return waitForRequest(scn, name, finished);
}

/** A Task named `name` whose description carries `marker`, as a hub would hold it. */
export function hubTask(name: string, marker: string, kind = "Task"): string {
  return `apiVersion: tekton.dev/v1\nkind: ${kind}\nmetadata:\n  name: ${name}\nspec:\n  description: ${marker}\n  steps:\n    - name: s\n      image: busybox\n      script: echo ${marker}\n`;
}
