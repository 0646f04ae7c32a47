// YAML aliases make a document a graph: `*a` repeats the node anchored `&a`
// without repeating its text, so nine levels of nine aliases ("billion
// laughs") are a few hundred bytes that Tekton's controller, or a client
// calling JSON.stringify, expands to gigabytes. The size limit must hold for
// the expanded form. We measure it without expanding: js-yaml hands back the
// anchored node itself for every alias, so a walk over the parsed graph with
// each object's size memoised costs O(nodes), and it stops once over the limit.
import yaml from "js-yaml";

/**
 * Stack safety only: targets are sized in text order, so an alias inside a target names a node
 * sized (memoised) before and the walk stays about as deep as the text nests (js-yaml caps that at 100).
 */
const MAX_DEPTH = 1000;

export interface Expansion {
  /** Size with every alias replaced by what it names; counting stops soon after `limit`. */
  bytes: number;
  /** Aliases in the text. */
  aliases: number;
  /** An alias names a node it sits in: the expansion never ends. */
  unbounded: boolean;
}

/**
 * `yaml.loadAll`, plus the size of the text once every alias is expanded: the raw bytes, plus for
 * each alias the size of its target (JSON bytes, which is what consumers turn it into) minus the
 * alias itself. Nested aliases count at every level, as they do when expanded.
 */
export function loadAllMeasured(text: string, limit: number): { docs: unknown[]; expansion: Expansion } {
  const targets: unknown[] = [];
  const docs = yaml.loadAll(text, null, {
    listener(event, state) {
      // An alias is the one node that closes with no kind of its own but a value (an empty node
      // has none); js-yaml gives it the anchored value itself, not a copy.
      if (event === "close" && state.kind === null && state.result !== null && state.result !== undefined)
        targets.push(state.result);
    },
  });
  // Sized after the parse, when every node is complete (an anchored collection can still be
  // growing when an alias inside it closes).
  const sizer = new Sizer(limit);
  let bytes = Buffer.byteLength(text);
  for (const target of targets) {
    // "*a" is at least two bytes of the raw text already counted
    bytes += Math.max(0, sizer.size(target, 0) - 2);
    if (bytes > limit) break;
  }
  return { docs, expansion: { bytes, aliases: targets.length, unbounded: sizer.unbounded } };
}

class Sizer {
  private readonly memo = new WeakMap<object, number>();
  private readonly open = new Set<object>();
  private readonly over: number;
  unbounded = false;

  constructor(limit: number) {
    this.over = limit + 1;
  }

  /** JSON bytes of `value` fully expanded, saturating at limit + 1. */
  size(value: unknown, depth: number): number {
    if (value === null || value === undefined) return 4;
    if (typeof value === "string") return Buffer.byteLength(value) + 2;
    if (typeof value === "number" || typeof value === "bigint") return String(value).length;
    if (typeof value === "boolean") return value ? 4 : 5;
    if (typeof value !== "object") return 4;
    if (value instanceof Date) return 26;
    if (ArrayBuffer.isView(value)) return Math.ceil(value.byteLength / 3) * 4 + 2; // !!binary as base64
    const known = this.memo.get(value);
    if (known !== undefined) return known;
    if (this.open.has(value)) {
      this.unbounded = true;
      return this.over;
    }
    if (depth > MAX_DEPTH) return this.over;
    this.open.add(value);
    let total = 2;
    if (Array.isArray(value)) {
      for (const item of value) {
        total += this.size(item, depth + 1) + 1;
        if (total >= this.over) break;
      }
    } else {
      for (const [key, item] of Object.entries(value)) {
        total += Buffer.byteLength(key) + 4 + this.size(item, depth + 1);
        if (total >= this.over) break;
      }
    }
    this.open.delete(value);
    total = Math.min(total, this.over);
    this.memo.set(value, total);
    return total;
  }
}
