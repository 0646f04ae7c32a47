// The cluster resolver's params schema, alone in a module without imports: scripts/gen-validators.ts
// compiles it into generated/params-validator.js, which resolver.ts hands the runtime.
const DNS_SUBDOMAIN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
const DNS_LABEL = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";

export const clusterParamsSchema = {
  type: "object",
  required: ["name"],
  additionalProperties: false,
  properties: {
    kind: { type: "string" },
    // object names go into an API path: "../x" there was a 403 for another resource, retried
    // as if the apiserver were down; the patterns refuse it at once
    name: { type: "string", minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN },
    // "" is unset: config default-namespace, else the request's namespace
    namespace: { type: "string", maxLength: 63, pattern: `^$|${DNS_LABEL}` },
  },
};
