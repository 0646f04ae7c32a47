// What a reconciler reads its objects through: an Informer's cache in
// production, a Map in a table test.
import type { KubeObject } from "../client/client.ts";
import { objectKey } from "./informer.ts";

/** Read access to a cache by "namespace/name" key (an Informer is one). */
export interface Lister<T> {
  getByKey(key: string): T | undefined;
}

/** A Lister over fixed objects, keyed like an informer; `set` replaces one. */
export class MapLister<T extends KubeObject> implements Lister<T> {
  private readonly objects = new Map<string, T>();

  constructor(objects: readonly T[] = []) {
    for (const obj of objects) this.set(obj);
  }

  set(obj: T): void {
    this.objects.set(objectKey(obj), obj);
  }

  getByKey(key: string): T | undefined {
    return this.objects.get(key);
  }
}
