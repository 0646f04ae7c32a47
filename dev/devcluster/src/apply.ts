// Create-or-replace of manifests, like `kubectl apply` for the harness's needs.
import { readFileSync } from "node:fs";
import { isApiError, type KubeClient, type KubeObject } from "@quarry/kube";
import yaml from "js-yaml";
import { kindOf } from "./kinds.ts";

export async function applyObject<T extends KubeObject>(client: KubeClient, obj: T): Promise<T> {
  const rt = kindOf(obj.kind);
  try {
    return await client.create(rt, obj);
  } catch (err) {
    if (!isApiError(err, 409)) throw err;
    const current = await client.get<T>(rt, obj.metadata.namespace, obj.metadata.name!);
    const next = { ...obj, metadata: { ...obj.metadata, resourceVersion: current.metadata.resourceVersion } };
    return client.replace(rt, next);
  }
}

export async function applyFile(client: KubeClient, path: string): Promise<KubeObject[]> {
  const docs = yaml.loadAll(readFileSync(path, "utf8")).filter(Boolean) as KubeObject[];
  const out: KubeObject[] = [];
  for (const doc of docs) out.push(await applyObject(client, doc));
  return out;
}
