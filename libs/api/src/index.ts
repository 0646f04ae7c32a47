// @quarry/api: the shared vocabulary of Quarry's services (object shapes,
// labels, reasons, schemas, CRDs and Tekton's request naming).
export { readCapped } from "./capped-read.ts";
export * from "./conditions.ts";
export * from "./conversion.ts";
export * from "./crd-types.ts";
export * from "./crds.ts";
export * from "./fnv.ts";
export { compareGoStrings, goJsonMarshal } from "./gojson.ts";
export * from "./labels.ts";
export * from "./naming.ts";
export * from "./pipe-crds.ts";
export * from "./pipe-schemas.ts";
export * from "./pipes.ts";
export * from "./reasons.ts";
export * from "./resources.ts";
export * from "./run-crds.ts";
export * from "./run-schemas.ts";
export * from "./runs.ts";
export type * from "./schema-types.ts";
export * from "./schemas.ts";
export * from "./shard.ts";
export * from "./substitution.ts";
export * from "./types.ts";
export * from "./validate.ts";
