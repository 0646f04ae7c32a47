// pipe-resolver: files made by a pipe pod, stored as ConfigMaps and Secrets. Wiring only.
import { ServiceRuntime } from "@quarry/kube";
import { runResolver } from "@quarry/resolver-sdk";
import { CONFIG_MAP_NAME } from "./config.ts";
import { pipeResolver } from "./wiring.ts";

const runtime = new ServiceRuntime("pipe-resolver");
await runResolver(pipeResolver(runtime), { configMap: CONFIG_MAP_NAME, runtime });
