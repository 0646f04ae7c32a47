// The subset of Kubernetes' JSONSchemaProps (apiextensions.k8s.io/v1) that
// Quarry's CRD schemas use. Typed, so a misspelt keyword fails typecheck
// instead of being silently ignored by the apiserver.

export interface ValidationRule {
  /** CEL expression; `self` is the node the rule sits on. */
  rule: string;
  message?: string;
  messageExpression?: string;
  /** e.g. "FieldValueInvalid", "FieldValueDuplicate" */
  reason?: string;
  /** JSONPath relative to self, e.g. ".params", for where the error is reported. */
  fieldPath?: string;
}

export interface JSONSchemaProps {
  type?: "object" | "array" | "string" | "integer" | "number" | "boolean";
  description?: string;
  format?: string;
  enum?: readonly (string | number | boolean)[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps | boolean;
  required?: readonly string[];
  items?: JSONSchemaProps;
  nullable?: boolean;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-int-or-string"?: boolean;
  "x-kubernetes-embedded-resource"?: boolean;
  "x-kubernetes-list-type"?: "atomic" | "set" | "map";
  "x-kubernetes-list-map-keys"?: readonly string[];
  "x-kubernetes-map-type"?: "atomic" | "granular";
  "x-kubernetes-validations"?: readonly ValidationRule[];
}
