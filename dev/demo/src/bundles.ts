// The demo's OCI side: the dev cluster's registry (CNCF distribution, the
// registry behind Docker Hub, as a real process on loopback) holding one
// Tekton bundle written by the real `tkn bundle push`, so the bundle resolver
// pulls over the same distribution API it would from a production registry.
import { type AccessEntry, type Registry, startRegistry, tknBundlePush } from "@quarry/devcluster/registry";
import type { Narrator } from "./narrator.ts";
import type { Teardown } from "./teardown.ts";

export const BUNDLE_REPO = "catalog/ci";
export const BUNDLE_TAG = "v1";
export const BUNDLE_TASK = "build";
export const BUNDLE_PIPELINE = "ci";

/** Short enough that `quarry describe` shows all of it. */
export const BUILD_TASK = `apiVersion: tekton.dev/v1
kind: Task
metadata:
  name: ${BUNDLE_TASK}
spec:
  steps:
    - name: build
      image: busybox
      script: echo "hello from a bundle"
`;

/** A second object, so a name the bundle lacks has more than one thing to list. */
export const CI_PIPELINE = `apiVersion: tekton.dev/v1
kind: Pipeline
metadata:
  name: ${BUNDLE_PIPELINE}
spec:
  tasks:
    - name: build
      taskRef:
        name: ${BUNDLE_TASK}
`;

export interface DemoBundle {
  registry: Registry;
  /** What a request's `bundle` param names, e.g. 127.0.0.1:41234/catalog/ci:v1 */
  ref: string;
  /** The manifest digest `tkn bundle push` printed, which the tag points at. */
  digest: string;
}

/** Starts the registry (stopped by the teardown, storage and all) and pushes the bundle. */
export async function startDemoRegistry(teardown: Teardown, n: Narrator): Promise<DemoBundle> {
  let registry: Registry | undefined;
  let starting: Promise<Registry> | undefined;
  // registered before the start completes: Ctrl-C while the registry process
  // comes up would otherwise leave it running (the fixture gives up within 20 s)
  teardown.add("the OCI registry", async () => {
    const r = registry ?? (await starting?.catch(() => undefined));
    if (!r) return;
    await r.dispose();
    n.sayAlways("OCI registry stopped, its storage removed");
  });
  starting = startRegistry();
  registry = await starting;
  const ref = registry.ref(`${BUNDLE_REPO}:${BUNDLE_TAG}`);
  const { digest } = await tknBundlePush(ref, [BUILD_TASK, CI_PIPELINE]);
  return { registry, ref, digest };
}

/**
 * What the registry answered, e.g. "3 HTTP requests: HEAD manifests/v1,
 * GET manifests/sha256:1a2b3c4…, GET blobs/sha256:5d6e7f8…": shows that a
 * resolution is real registry traffic, and which fetches the resolver's
 * digest-addressed cache spared.
 */
export function registryTraffic(entries: readonly AccessEntry[]): string {
  if (entries.length === 0) return "no requests";
  const parts = entries.map((e) => {
    // /v2/<repository>/(manifests|blobs)/<reference>; /v2/ alone is the version check
    const m = /^\/v2\/.+\/(manifests|blobs)\/([^/]+)$/.exec(e.path);
    const what = m ? `${m[1]}/${shortRef(m[2]!)}` : e.path;
    return `${e.method} ${what}${e.status >= 400 ? ` (${e.status})` : ""}`;
  });
  return `${entries.length} HTTP request${entries.length > 1 ? "s" : ""}: ${parts.join(", ")}`;
}

function shortRef(ref: string): string {
  return /^sha256:[0-9a-f]{64}$/.test(ref) ? `${ref.slice(0, 14)}…` : ref;
}

/**
 * The access log lines land just after the responses, so wait until the
 * request that ends a resolution (`last`) is logged, briefly: a summary that
 * misses a line is better than a demo that hangs on one.
 */
export async function trafficAfter(
  registry: Registry,
  from: number,
  last: (e: AccessEntry) => boolean,
): Promise<AccessEntry[]> {
  const deadline = Date.now() + 1_000;
  for (;;) {
    const entries = registry.accessLog().slice(from);
    if (entries.some(last) || Date.now() > deadline) return entries;
    await new Promise((r) => setTimeout(r, 20));
  }
}
