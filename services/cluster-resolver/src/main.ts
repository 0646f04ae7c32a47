// cluster-resolver: resolves Tasks, Pipelines and StepActions from this cluster. Wiring only.
import { ServiceRuntime } from "@quarry/kube";
import { runResolvers } from "@quarry/resolver-sdk";
import { wireClusterResolver } from "./wiring.ts";

const runtime = new ServiceRuntime("cluster-resolver");
await runResolvers([await wireClusterResolver(runtime)], { runtime });
