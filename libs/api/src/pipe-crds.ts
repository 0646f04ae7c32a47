// CRDs of Quarry's pipe kinds: pipes, pipestrategies and
// clusterpipestrategies in quarry.dev, serving v1alpha1, in the `quarry`
// category. Always installed with Quarry's API (libs/api/crds/*.yaml).
import { singleVersionCrd } from "./crd-builder.ts";
import type { CustomResourceDefinition, PrinterColumn } from "./crd-types.ts";
import { pipeSchema, pipeStrategySchema } from "./pipe-schemas.ts";
import { clusterPipeStrategies, pipeStrategies, pipes } from "./pipes.ts";
import type { JSONSchemaProps } from "./schema-types.ts";

type PipeResource = typeof pipes | typeof pipeStrategies | typeof clusterPipeStrategies;

export const PIPE_CRD_NAME = `${pipes.plural}.${pipes.group}`;
export const PIPE_STRATEGY_CRD_NAME = `${pipeStrategies.plural}.${pipeStrategies.group}`;
export const CLUSTER_PIPE_STRATEGY_CRD_NAME = `${clusterPipeStrategies.plural}.${clusterPipeStrategies.group}`;

const AGE: PrinterColumn = { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" };

function crdFor(
  rt: PipeResource,
  schema: JSONSchemaProps,
  columns: PrinterColumn[],
): CustomResourceDefinition {
  return singleVersionCrd(rt, {
    categories: ["quarry"],
    columns: [...columns, AGE],
    schema,
    statusSubresource: false,
  });
}

const INIT_IMAGE: PrinterColumn = {
  name: "Init Image",
  type: "string",
  jsonPath: ".spec.pod.initContainers[0].image",
  description: "Image of the init container that writes the piped files.",
};

/** pipes.quarry.dev (namespaced). */
export function pipeCrd(): CustomResourceDefinition {
  return crdFor(pipes, pipeSchema(), [
    {
      name: "Strategy",
      type: "string",
      jsonPath: ".spec.strategy.name",
      description: "The PipeStrategy or ClusterPipeStrategy (spec.strategy.kind) that makes the pod.",
    },
  ]);
}

/** pipestrategies.quarry.dev (namespaced). */
export function pipeStrategyCrd(): CustomResourceDefinition {
  return crdFor(pipeStrategies, pipeStrategySchema(false), [INIT_IMAGE]);
}

/** clusterpipestrategies.quarry.dev (cluster-scoped). */
export function clusterPipeStrategyCrd(): CustomResourceDefinition {
  return crdFor(clusterPipeStrategies, pipeStrategySchema(true), [INIT_IMAGE]);
}
