// The hub resolver on a service runtime: the hubs' addresses from the process
// env (ARTIFACT_HUB_API, TEKTON_HUB_API). Used by main.ts and by any process
// that hosts it beside other controllers.
import type { ServiceRuntime } from "@quarry/kube";
import type { HostedResolver } from "@quarry/resolver-sdk";
import { CONFIG_MAP_NAME, hubEnv } from "./config.ts";
import { HubResolver } from "./resolver.ts";

// the runtime is taken for the same shape as the other resolvers' wiring; the hub needs none of it
export function wireHubResolver(_runtime: ServiceRuntime): HostedResolver {
  return { resolver: new HubResolver(hubEnv(process.env)), configMap: CONFIG_MAP_NAME };
}
