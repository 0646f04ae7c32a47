// The bundle resolver on a service runtime: its registry client (plain-http
// hosts, token realms, CAs and proxy from the live config), credentials read
// with the runtime's client, its metrics on the runtime's meter. Used by
// main.ts and by any process that hosts it beside other controllers.
import type { ServiceRuntime } from "@quarry/kube";
import { RegistryClient } from "@quarry/oci";
import { egressFetch, type HostedResolver } from "@quarry/resolver-sdk";
import { CONFIG_MAP_NAME } from "./config.ts";
import { kubeCredentialLoader } from "./credentials.ts";
import { registerBundleMetrics } from "./metrics.ts";
import { BundleResolver } from "./resolver.ts";

export function wireBundleResolver(runtime: ServiceRuntime): HostedResolver {
  const registry = new RegistryClient({
    userAgent: "quarry-bundle-resolver/0.1",
    allowsPlainHttp: (host) => resolver.allowsPlainHttp(host),
    tokenRealmHosts: () => resolver.tokenRealmHosts(),
    // CAs and proxy from the live config, per call
    fetch: egressFetch(() => resolver.egress()),
  });
  const resolver: BundleResolver = new BundleResolver({
    registry,
    loadCredentials: kubeCredentialLoader(runtime.client),
  });
  registerBundleMetrics(runtime.metrics.meter, resolver);
  return { resolver, configMap: CONFIG_MAP_NAME };
}
