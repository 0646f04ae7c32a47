// run-controller: creates the ResolutionRequests of remote run refs, records
// childReferences and provenance, enforces the custom-task contract for
// every Run and CustomRun, and runs the built-in Pipe task. Wiring only.
import { ServiceRuntime } from "@quarry/kube";
import { wireRunController } from "./wiring.ts";

const runtime = new ServiceRuntime("run-controller");
await wireRunController(runtime);
await runtime.run();
