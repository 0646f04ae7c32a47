// Secondary indexes over an informer's cache, as client-go's Indexer: a named
// function maps an object to index values, and the cache answers "which
// objects have value v" without scanning. Typical use: find the children of
// an owner (byOwnerUid) or the objects carrying a label value (byLabel).
import type { KubeObject } from "../client/client.ts";

/** Index values of one object; [] leaves it out of the index. */
export type IndexFunc<T> = (obj: T) => string[];

interface Index<T> {
  fn: IndexFunc<T>;
  /** value → keys of the objects indexed under it */
  byValue: Map<string, Set<string>>;
  /** key → the values it was indexed under, so updates drop stale entries even if fn is not pure */
  byKey: Map<string, readonly string[]>;
}

export class Indexer<T> {
  private readonly indexes = new Map<string, Index<T>>();

  /**
   * Registers `fn` under `name` and indexes `existing` (the cache as it is now). The same
   * function under the same name again is kept as it is: readers of a shared informer each add
   * the index they read. Another function under a taken name throws.
   */
  add(name: string, fn: IndexFunc<T>, existing: Iterable<[string, T]>): void {
    const current = this.indexes.get(name);
    if (current?.fn === fn) return;
    if (current) throw new Error(`index ${name} already exists`);
    const index: Index<T> = { fn, byValue: new Map(), byKey: new Map() };
    this.indexes.set(name, index);
    for (const [key, obj] of existing) put(index, key, obj);
  }

  /** Keys of the objects indexed under `value`; throws for an unknown index (a typo should be loud). */
  keys(name: string, value: string): Iterable<string> {
    const index = this.indexes.get(name);
    if (!index) throw new Error(`no index named ${name}`);
    return index.byValue.get(value) ?? [];
  }

  /** The object under `key` was added or changed. */
  set(key: string, obj: T): void {
    for (const index of this.indexes.values()) {
      drop(index, key);
      put(index, key, obj);
    }
  }

  /** The object under `key` left the cache. */
  delete(key: string): void {
    for (const index of this.indexes.values()) drop(index, key);
  }
}

function put<T>(index: Index<T>, key: string, obj: T): void {
  const values = [...new Set(index.fn(obj))];
  if (values.length === 0) return;
  index.byKey.set(key, values);
  for (const v of values) {
    let keys = index.byValue.get(v);
    if (!keys) {
      keys = new Set();
      index.byValue.set(v, keys);
    }
    keys.add(key);
  }
}

function drop<T>(index: Index<T>, key: string): void {
  const values = index.byKey.get(key);
  if (!values) return;
  index.byKey.delete(key);
  for (const v of values) {
    const keys = index.byValue.get(v);
    keys?.delete(key);
    // empty sets would otherwise pile up for every owner uid ever seen
    if (keys?.size === 0) index.byValue.delete(v);
  }
}

/** Index function: the uids of an object's ownerReferences (all of them, controller or not). */
export function byOwnerUid(obj: KubeObject): string[] {
  return (obj.metadata.ownerReferences ?? [])
    .map((ref) => ref.uid)
    .filter((uid) => typeof uid === "string" && uid !== "");
}

/** Index function: the value of label `labelKey`; objects without the label are not indexed. */
export function byLabel(labelKey: string): IndexFunc<KubeObject> {
  return (obj) => {
    const value = obj.metadata.labels?.[labelKey];
    return value === undefined ? [] : [value];
  };
}
