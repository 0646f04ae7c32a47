// The pipe resolver's params schema, alone in a module without imports: scripts/gen-validators.ts
// compiles it into generated/params-validator.js, which resolver.ts hands the runtime.

/** Strategy params are free-form: readRequest checks the resolver's own and their shapes. */
export const pipeParamsSchema = { type: "object" };
