// hub-resolver: Tekton's `hub` type, Tasks, Pipelines and StepActions from Artifact Hub or Tekton Hub. Wiring only.
import { ServiceRuntime } from "@quarry/kube";
import { runResolvers } from "@quarry/resolver-sdk";
import { wireHubResolver } from "./wiring.ts";

const runtime = new ServiceRuntime("hub-resolver");
await runResolvers([wireHubResolver(runtime)], { runtime });
