// hub-resolver: Tekton's `hub` type, Tasks, Pipelines and StepActions from Artifact Hub or Tekton Hub. Wiring only.
import { ServiceRuntime } from "@quarry/kube";
import { runResolver } from "@quarry/resolver-sdk";
import { CONFIG_MAP_NAME, hubEnv } from "./config.ts";
import { HubResolver } from "./resolver.ts";

const runtime = new ServiceRuntime("hub-resolver");
await runResolver(new HubResolver(hubEnv(process.env)), { configMap: CONFIG_MAP_NAME, runtime });
