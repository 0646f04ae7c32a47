// http-resolver: Tekton's `http` type, files fetched over HTTP(S). Wiring only.
import { ServiceRuntime } from "@quarry/kube";
import { runResolver } from "@quarry/resolver-sdk";
import { CONFIG_MAP_NAME } from "./config.ts";
import { HttpResolver } from "./resolver.ts";
import { kubePasswordReader } from "./secret.ts";

const runtime = new ServiceRuntime("http-resolver");
const resolver = new HttpResolver({ readPassword: kubePasswordReader(runtime.client) });
await runResolver(resolver, { configMap: CONFIG_MAP_NAME, runtime });
