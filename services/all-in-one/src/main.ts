// all-in-one: the lifecycle controller, the run-controller and every resolver
// in one process on one ServiceRuntime ("quarry"); QUARRY_COMPONENTS picks
// which. Wiring only.
import { ServiceRuntime } from "@quarry/kube";
import { parseComponents } from "./components.ts";
import { wireAllInOne } from "./wiring.ts";

// refused before a runtime exists: a misspelt component exits without serving anything
const components = parseComponents(process.env.QUARRY_COMPONENTS);
const runtime = new ServiceRuntime("quarry");
await wireAllInOne(runtime, components);
await runtime.run();
