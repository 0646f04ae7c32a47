// bundle-resolver: Tekton bundles from OCI registries. Wiring only.
import { ServiceRuntime } from "@quarry/kube";
import { RegistryClient } from "@quarry/oci";
import { egressFetch, runResolver } from "@quarry/resolver-sdk";
import { CONFIG_MAP_NAME } from "./config.ts";
import { kubeCredentialLoader } from "./credentials.ts";
import { registerBundleMetrics } from "./metrics.ts";
import { BundleResolver } from "./resolver.ts";

const runtime = new ServiceRuntime("bundle-resolver");
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
await runResolver(resolver, { configMap: CONFIG_MAP_NAME, runtime });
