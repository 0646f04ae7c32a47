// The CRD every generator starts from (crds.ts, pipe-crds.ts, run-crds.ts):
// one version, served and stored, named after its resource type. Internal to
// libs/api: only the CRDs it builds are exported.
import type { CustomResourceDefinition, PrinterColumn } from "./crd-types.ts";
import type { JSONSchemaProps } from "./schema-types.ts";

/** The label every object Quarry installs carries. */
export const PART_OF = { "app.kubernetes.io/part-of": "quarry" };

/** What a CRD is named after: the resource type's group, version, plural and kind (singular: the kind in lower case). */
interface CrdResource {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
}

export interface CrdVersion {
  categories: string[];
  columns: PrinterColumn[];
  schema: JSONSchemaProps;
  /** Whether the version has the status subresource (writes to status go through /status only). */
  statusSubresource: boolean;
}

/** The CRD of `rt`, serving and storing `rt.version` alone. */
export function singleVersionCrd(rt: CrdResource, v: CrdVersion): CustomResourceDefinition {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${rt.plural}.${rt.group}`, labels: { ...PART_OF } },
    spec: {
      group: rt.group,
      names: {
        kind: rt.kind,
        listKind: `${rt.kind}List`,
        plural: rt.plural,
        singular: rt.kind.toLowerCase(),
        categories: v.categories,
      },
      scope: rt.namespaced ? "Namespaced" : "Cluster",
      versions: [
        {
          name: rt.version,
          served: true,
          storage: true,
          ...(v.statusSubresource ? { subresources: { status: {} } } : {}),
          additionalPrinterColumns: v.columns,
          schema: { openAPIV3Schema: v.schema },
        },
      ],
    },
  };
}
