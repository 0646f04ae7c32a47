// What `get` does for any resource it lists: fetch by name or list (with a
// label selector), print as a table or as -o json|yaml|name, and with -w keep
// printing each change until interrupted, the way `kubectl get -w` does: the
// listing first, then one row (or object) per event.
import type { KubeClient, KubeObject, ResourceType } from "@quarry/kube";
import type { OutputFormat } from "./args.ts";
import { isUnserved } from "./errors.ts";
import { noResourcesFound } from "./listing.ts";
import { formatObjects, formatWatched } from "./output.ts";

/** One resource a listing reads (requests have one; runs have two flavours). */
export interface ListSource {
  rt: ResourceType;
  /** Set on listed items, which the apiserver sends without apiVersion and kind. */
  apiVersion: string;
  kind: string;
  /** A path nobody serves (the CRD is missing): skip this source, or fail with this error. */
  whenUnserved: "skip" | Error;
}

export interface ListFlags {
  /** undefined: all namespaces. */
  namespace: string | undefined;
  names?: readonly string[];
  output?: OutputFormat;
  selector?: string | undefined;
  watch?: boolean;
}

/** The table for these items (`wide`: the extra columns), with its header. */
export type TableOf<T> = (items: readonly T[], now: number, allNamespaces: boolean, wide: boolean) => string;

type Write = (s: string) => void;

/** Runs one `get`; with `watch`, returns when `signal` aborts (Ctrl-C). */
export async function runList<T extends KubeObject>(
  client: KubeClient,
  sources: readonly ListSource[],
  flags: ListFlags,
  table: TableOf<T>,
  io: { out: Write; err: Write; signal?: AbortSignal; noneServed?: Error },
): Promise<void> {
  const output = flags.output ?? "table";
  const names = flags.names ?? [];
  const fetched = await Promise.all(sources.map((s) => fetchSource<T>(client, s, flags, names)));
  if (fetched.every((f) => f === undefined))
    throw io.noneServed ?? new Error("this cluster serves none of these resources");
  const items = fetched.flatMap((f) => f?.items ?? []);
  const allNamespaces = flags.namespace === undefined;
  if (output === "table" || output === "wide") {
    if (items.length === 0) io.err(noResourcesFound(flags.namespace));
    else io.out(table(items, Date.now(), allNamespaces, output === "wide"));
  } else if (!(flags.watch && items.length === 0)) {
    io.out(formatObjects(items, output, names.length === 1));
  }
  if (!flags.watch) return;
  const signal = io.signal ?? new AbortController().signal;
  const print = (item: T) => {
    if (output === "table" || output === "wide") {
      // the header is the listing's: a change prints its row only
      const lines = table([item], Date.now(), allNamespaces, output === "wide").split("\n");
      io.out(`${lines.slice(1).join("\n")}`);
    } else io.out(formatWatched(item, output));
  };
  await Promise.all(
    sources.map((s, i) => {
      const from = fetched[i];
      return from ? watchSource(client, s, flags, from.resourceVersion, print, signal) : undefined;
    }),
  );
}

interface Fetched<T> {
  items: T[];
  resourceVersion: string | undefined;
}

async function fetchSource<T extends KubeObject>(
  client: KubeClient,
  source: ListSource,
  flags: ListFlags,
  names: readonly string[],
): Promise<Fetched<T> | undefined> {
  const stamp = (o: T): T => ({ ...o, apiVersion: source.apiVersion, kind: source.kind });
  try {
    if (names.length > 0) {
      const items = await Promise.all(names.map((n) => client.get<T>(source.rt, flags.namespace, n)));
      return { items: items.map(stamp), resourceVersion: undefined };
    }
    const list = await client.list<T>(source.rt, flags.namespace, {
      ...(flags.selector !== undefined && { labelSelector: flags.selector }),
    });
    return { items: list.items.map(stamp), resourceVersion: list.metadata?.resourceVersion };
  } catch (e) {
    if (!isUnserved(e)) throw e;
    if (source.whenUnserved === "skip") return undefined;
    throw source.whenUnserved;
  }
}

/** Watches from `resourceVersion` until aborted; a watch the server ends is started again from the last event. */
async function watchSource<T extends KubeObject>(
  client: KubeClient,
  source: ListSource,
  flags: ListFlags,
  resourceVersion: string | undefined,
  print: (item: T) => void,
  signal: AbortSignal,
): Promise<void> {
  let from = resourceVersion;
  while (!signal.aborted) {
    try {
      const events = client.watch<T>(
        source.rt,
        flags.namespace,
        {
          ...(from !== undefined && { resourceVersion: from }),
          ...(flags.selector !== undefined && { labelSelector: flags.selector }),
          allowWatchBookmarks: true,
        },
        signal,
      );
      for await (const event of events) {
        if (event.type === "ERROR") throw new Error(`watch ended: ${JSON.stringify(event.object)}`);
        from = event.object.metadata.resourceVersion ?? from;
        if (event.type === "BOOKMARK") continue;
        print({ ...event.object, apiVersion: source.apiVersion, kind: source.kind });
      }
    } catch (e) {
      if (signal.aborted) return;
      throw e;
    }
  }
}
