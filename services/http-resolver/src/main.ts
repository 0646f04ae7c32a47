// http-resolver: Tekton's `http` type, files fetched over HTTP(S). Wiring only.
import { ServiceRuntime } from "@quarry/kube";
import { runResolvers } from "@quarry/resolver-sdk";
import { wireHttpResolver } from "./wiring.ts";

const runtime = new ServiceRuntime("http-resolver");
await runResolvers([wireHttpResolver(runtime)], { runtime });
