// git-resolver: files from git repositories. Wiring only.
import { ServiceRuntime } from "@quarry/kube";
import { runResolver } from "@quarry/resolver-sdk";
import { CONFIG_MAP_NAME } from "./config.ts";
import { gitResolver } from "./wiring.ts";

const runtime = new ServiceRuntime("git-resolver");
await runResolver(await gitResolver(runtime), { configMap: CONFIG_MAP_NAME, runtime });
