// CRDs of Tekton's custom-task runs as Quarry ships them: runs.tekton.dev
// (v1alpha1) and customruns.tekton.dev (v1beta1), with the schemas of
// run-schemas.ts. Installing them is optional: a cluster running Tekton
// Pipelines already has customruns.tekton.dev (and, before Tekton v0.47,
// runs.tekton.dev), and Quarry works on those unchanged.
import { singleVersionCrd } from "./crd-builder.ts";
import type { CustomResourceDefinition, PrinterColumn } from "./crd-types.ts";
import { runSchema } from "./run-schemas.ts";
import { customRuns, type RunFlavour, runs } from "./runs.ts";

export const RUN_CRD_NAME = `${runs.plural}.${runs.group}`;
export const CUSTOM_RUN_CRD_NAME = `${customRuns.plural}.${customRuns.group}`;
/** Where the generated run CRDs live, relative to libs/api/crds/: apart, since installing them is optional. */
export const RUN_CRDS_SUBDIR = "tekton";

const SUCCEEDED = '.status.conditions[?(@.type=="Succeeded")]';

/** Tekton's columns for runs (Succeeded, Reason, StartTime, CompletionTime), plus the custom task's kind. */
function runPrinterColumns(flavour: RunFlavour): PrinterColumn[] {
  const [ref, spec] = flavour === "Run" ? ["ref", "spec"] : ["customRef", "customSpec"];
  return [
    { name: "Succeeded", type: "string", jsonPath: `${SUCCEEDED}.status` },
    { name: "Reason", type: "string", jsonPath: `${SUCCEEDED}.reason` },
    {
      name: "Kind",
      type: "string",
      // a union: whichever of the reference or the embedded spec the run has
      jsonPath: `.spec['${ref}','${spec}'].kind`,
      description: "Kind of the custom task the run executes.",
    },
    { name: "StartTime", type: "date", jsonPath: ".status.startTime" },
    { name: "CompletionTime", type: "date", jsonPath: ".status.completionTime" },
  ];
}

function crdFor(flavour: RunFlavour): CustomResourceDefinition {
  return singleVersionCrd(flavour === "Run" ? runs : customRuns, {
    categories: ["tekton", "tekton-pipelines"],
    columns: runPrinterColumns(flavour),
    schema: runSchema(flavour),
    statusSubresource: true,
  });
}

/** runs.tekton.dev, serving and storing tekton.dev/v1alpha1 Run. */
export function runCrd(): CustomResourceDefinition {
  return crdFor("Run");
}

/** customruns.tekton.dev, serving and storing tekton.dev/v1beta1 CustomRun. */
export function customRunCrd(): CustomResourceDefinition {
  return crdFor("CustomRun");
}
