// The CustomResourceDefinition shape (apiextensions.k8s.io/v1) the generators
// build, in a file of its own so that every generator (crds.ts, pipe-crds.ts,
// run-crds.ts) imports it without importing the others.
import type { JSONSchemaProps } from "./schema-types.ts";

export interface PrinterColumn {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  jsonPath: string;
  description?: string;
  priority?: number;
}

/** Where the apiserver sends ConversionReviews: a Service, or a URL (tests, out-of-cluster webhooks). */
export interface WebhookClientConfig {
  service?: { name: string; namespace: string; path?: string; port?: number };
  url?: string;
  /** Base64 PEM bundle; injected by the lifecycle controller or cert-manager's cainjector. */
  caBundle?: string;
}

export interface CustomResourceConversion {
  strategy: "None" | "Webhook";
  webhook?: { conversionReviewVersions: string[]; clientConfig: WebhookClientConfig };
}

export interface CustomResourceDefinition {
  apiVersion: "apiextensions.k8s.io/v1";
  kind: "CustomResourceDefinition";
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      categories?: string[];
      shortNames?: string[];
    };
    scope: "Namespaced" | "Cluster";
    conversion?: CustomResourceConversion;
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources?: { status?: Record<string, never> };
      additionalPrinterColumns?: PrinterColumn[];
      schema: { openAPIV3Schema: JSONSchemaProps };
    }[];
  };
}
