// What `quarry get` and `quarry get runs` share: kubectl's listing table and
// its words for an empty listing.
import { formatTable } from "./table.ts";

/** An object as a listing reads it. */
interface Listed {
  metadata: { namespace?: string; name?: string };
}

export interface ListingColumns<T extends Listed> {
  headers: readonly string[];
  /** One row's cells, in the headers' order. */
  cells: (item: T) => string[];
  /** Rows sort by this key in byte order. */
  sortKey: (item: T) => string;
}

/** The table for `items`, with a NAMESPACE column first when listing all namespaces (`kubectl get -A`). */
export function formatListing<T extends Listed>(
  items: readonly T[],
  columns: ListingColumns<T>,
  allNamespaces: boolean,
): string {
  const key = columns.sortKey;
  const sorted = [...items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  const rows = sorted.map((item) => {
    const row = columns.cells(item);
    return allNamespaces ? [item.metadata.namespace ?? "", ...row] : row;
  });
  const headers = columns.headers;
  return formatTable(allNamespaces ? ["NAMESPACE", ...headers] : headers, rows);
}

/** What kubectl prints on stderr when a listing is empty; undefined `namespace`: all namespaces. */
export function noResourcesFound(namespace: string | undefined): string {
  return namespace ? `No resources found in ${namespace} namespace.\n` : "No resources found\n";
}
