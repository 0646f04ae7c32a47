// pipe-resolver: files made by a pipe pod, stored as ConfigMaps and Secrets. Wiring only.
import { ServiceRuntime } from "@quarry/kube";
import { runResolvers } from "@quarry/resolver-sdk";
import { wirePipeResolver } from "./wiring.ts";

const runtime = new ServiceRuntime("pipe-resolver");
await runResolvers([wirePipeResolver(runtime)], { runtime });
