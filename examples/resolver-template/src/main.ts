// Wiring only: the runtime does the rest.
import { runResolver } from "@quarry/resolver-sdk";
import { HttpResolver } from "./resolver.ts";

await runResolver(new HttpResolver(), { configMap: "resolver-template-config" });
