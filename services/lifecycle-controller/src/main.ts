// lifecycle-controller: initialises, completes and times out ResolutionRequests. Wiring only.
import { ServiceRuntime } from "@quarry/kube";
import { wireLifecycleController } from "./wiring.ts";

const runtime = new ServiceRuntime("lifecycle-controller");
wireLifecycleController(runtime);
await runtime.run();
