// Which of SHARD_COUNT shards a object's name falls in: a weighted sum of its
// characters, computable both here and in a CEL expression, so a
// MutatingAdmissionPolicy can stamp the shard as a label (LABEL_SHARD) and
// each replica's watch can select its own buckets' requests server-side.
// CEL has no hash function; this is a linear hash with odd per-position
// weights: changing any one character changes the shard, and keys spread
// evenly (shard.test.ts).
import { LABEL_SHARD } from "./labels.ts";

/** Shards per name; a service's buckets each take `shard % buckets` of them. */
export const SHARD_COUNT = 256;
/** The longest object name (a DNS-1123 subdomain). */
const MAX_NAME = 253;
/** The characters of a DNS-1123 subdomain; anything else counts as 0. */
const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz-.";

/** Odd weights in [1, 255], one per position, from a fixed xorshift32 sequence. */
const WEIGHTS: readonly number[] = (() => {
  const out: number[] = [];
  let x = 0x9e3779b9;
  for (let i = 0; i < MAX_NAME; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out.push((x >>> 24) | 1);
  }
  return out;
})();

/** The shard (0 to SHARD_COUNT-1) of an object called `name`. */
export function shardOfName(name: string): number {
  let sum = 0;
  const n = Math.min(name.length, MAX_NAME);
  for (let i = 0; i < n; i++) sum += WEIGHTS[i]! * (ALPHABET.indexOf(name[i]!) + 1);
  return sum % SHARD_COUNT;
}

/** The same as shardOfName, as a CEL int expression over the string expression `name` (Kubernetes ≥ 1.33: transformList). */
export function shardCel(name: string): string {
  return `${name}.split('').transformList(i, c, [${WEIGHTS.join(",")}][i] * ('${ALPHABET}'.indexOf(c) + 1)).sum() % ${SHARD_COUNT}`;
}

/**
 * A label selector for the objects in a wanted shard and those with no shard label (made before
 * the policy, or with generateName: admission does not see the generated name). Undefined when
 * every shard is wanted.
 */
export function shardSelector(wanted: (shard: number) => boolean): string | undefined {
  const others: number[] = [];
  for (let s = 0; s < SHARD_COUNT; s++) if (!wanted(s)) others.push(s);
  return others.length === 0 ? undefined : `${LABEL_SHARD} notin (${others.join(",")})`;
}
