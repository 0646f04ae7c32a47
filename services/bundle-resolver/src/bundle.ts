// The Tekton bundle contract, as pure functions over a parsed manifest:
// at most 20 layers, each annotated with dev.tekton.image.{apiVersion,kind,name},
// kind lower-case and singular, one Tekton object per layer.
import type { Descriptor, ImageManifest } from "@quarry/oci";
import { ResolutionError } from "@quarry/resolver-sdk";

export const MAX_BUNDLE_OBJECTS = 20;
export const LAYER_KIND = "dev.tekton.image.kind";
export const LAYER_NAME = "dev.tekton.image.name";
export const LAYER_API_VERSION = "dev.tekton.image.apiVersion";

export const invalidBundle = (message: string) => new ResolutionError("InvalidBundle", message);

/** Throws InvalidBundle naming the first layer that breaks the contract. */
export function checkBundle(manifest: ImageManifest, bundle: string): void {
  const n = manifest.layers.length;
  if (n > MAX_BUNDLE_OBJECTS) {
    throw invalidBundle(
      `param "bundle": ${bundle} has ${n} layers; a Tekton bundle holds at most ${MAX_BUNDLE_OBJECTS} objects`,
    );
  }
  manifest.layers.forEach((layer, i) => {
    for (const key of [LAYER_API_VERSION, LAYER_NAME, LAYER_KIND]) {
      if (layer.annotations?.[key] === undefined) {
        throw invalidBundle(
          `param "bundle": layer ${i} of ${bundle} has no ${key} annotation: not a Tekton bundle`,
        );
      }
    }
    const kind = layer.annotations?.[LAYER_KIND] ?? "";
    if (kind !== kind.toLowerCase() || kind.endsWith("s") || kind === "") {
      throw invalidBundle(
        `param "bundle": layer ${i} of ${bundle} has ${LAYER_KIND} ${JSON.stringify(kind)}; it must be lower-case and singular (e.g. "task")`,
      );
    }
  });
}

/** The layer holding `kind`/`name` (kind case-insensitive, name exact); NotFound lists what the bundle holds. */
export function findLayer(manifest: ImageManifest, kind: string, name: string, bundle: string): Descriptor {
  const wanted = kind.toLowerCase();
  const layer = manifest.layers.find(
    (l) => l.annotations?.[LAYER_KIND]?.toLowerCase() === wanted && l.annotations?.[LAYER_NAME] === name,
  );
  if (layer) return layer;
  const held = manifest.layers.map((l) => `${l.annotations?.[LAYER_KIND]}/${l.annotations?.[LAYER_NAME]}`);
  throw new ResolutionError(
    "NotFound",
    `param "name": no ${wanted} named ${JSON.stringify(name)} in ${bundle}; it holds ${held.length ? held.join(", ") : "nothing"}`,
  );
}

/** Result annotations, as Tekton's bundle resolver writes them. */
export function resultAnnotations(layer: Descriptor): Record<string, string> {
  return {
    [`resolution.tekton.dev/${LAYER_KIND}`]: layer.annotations?.[LAYER_KIND] ?? "",
    [`resolution.tekton.dev/${LAYER_NAME}`]: layer.annotations?.[LAYER_NAME] ?? "",
    [`resolution.tekton.dev/${LAYER_API_VERSION}`]: layer.annotations?.[LAYER_API_VERSION] ?? "",
  };
}
