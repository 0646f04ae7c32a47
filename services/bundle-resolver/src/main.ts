// bundle-resolver: Tekton bundles from OCI registries. Wiring only.
import { ServiceRuntime } from "@quarry/kube";
import { runResolvers } from "@quarry/resolver-sdk";
import { wireBundleResolver } from "./wiring.ts";

const runtime = new ServiceRuntime("bundle-resolver");
await runResolvers([wireBundleResolver(runtime)], { runtime });
