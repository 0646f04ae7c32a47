// The http resolver on a service runtime: basic-auth passwords read from Secrets
// with the runtime's client. Used by main.ts and by any process that hosts it
// beside other controllers.
import type { ServiceRuntime } from "@quarry/kube";
import type { HostedResolver } from "@quarry/resolver-sdk";
import { CONFIG_MAP_NAME } from "./config.ts";
import { HttpResolver } from "./resolver.ts";
import { kubePasswordReader } from "./secret.ts";

export function wireHttpResolver(runtime: ServiceRuntime): HostedResolver {
  const resolver = new HttpResolver({ readPassword: kubePasswordReader(runtime.client) });
  return { resolver, configMap: CONFIG_MAP_NAME };
}
