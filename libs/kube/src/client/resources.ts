// The API resources Quarry's runtime talks to, as plain data so that paths are
// built in one place and RBAC rules can name the same plurals.
export interface ResourceType {
  readonly group: string; // "" for the core group
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

export const configMaps: ResourceType = {
  group: "",
  version: "v1",
  plural: "configmaps",
  kind: "ConfigMap",
  namespaced: true,
};

export const events: ResourceType = {
  group: "",
  version: "v1",
  plural: "events",
  kind: "Event",
  namespaced: true,
};

export const namespaces: ResourceType = {
  group: "",
  version: "v1",
  plural: "namespaces",
  kind: "Namespace",
  namespaced: false,
};

export function apiVersionOf(rt: ResourceType): string {
  return rt.group === "" ? rt.version : `${rt.group}/${rt.version}`;
}

/** REST path of a collection (name undefined) or of one object, optionally a subresource. */
export function resourcePath(
  rt: ResourceType,
  namespace?: string,
  name?: string,
  subresource?: string,
): string {
  let path = rt.group === "" ? `/api/${rt.version}` : `/apis/${rt.group}/${rt.version}`;
  if (rt.namespaced && namespace) path += `/namespaces/${encodeURIComponent(namespace)}`;
  path += `/${rt.plural}`;
  if (name !== undefined) path += `/${encodeURIComponent(name)}`;
  if (subresource) path += `/${subresource}`;
  return path;
}

export const secrets: ResourceType = {
  group: "",
  version: "v1",
  plural: "secrets",
  kind: "Secret",
  namespaced: true,
};

export const serviceAccounts: ResourceType = {
  group: "",
  version: "v1",
  plural: "serviceaccounts",
  kind: "ServiceAccount",
  namespaced: true,
};
