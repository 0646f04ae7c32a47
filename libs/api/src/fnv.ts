// FNV-1a with a 128-bit state (Go's hash/fnv New128a), the hash Tekton uses for
// deterministic ResolutionRequest names. BigInt keeps it exact and short; names
// hash a few hundred bytes, so speed does not matter here.

const OFFSET_BASIS = 0x6c62272e07bb014262b821756295c58dn;
const PRIME = 0x0000000001000000000000000000013bn; // 2^88 + 2^8 + 0x3b
const MASK = (1n << 128n) - 1n;

const encoder = new TextEncoder();

/** Streaming FNV-128a: feed bytes or strings (as UTF-8) in order, then read the digest. */
export class Fnv128a {
  #state = OFFSET_BASIS;

  update(data: Uint8Array | string): this {
    const bytes = typeof data === "string" ? encoder.encode(data) : data;
    let h = this.#state;
    for (const b of bytes) h = ((h ^ BigInt(b)) * PRIME) & MASK;
    this.#state = h;
    return this;
  }

  /** Big-endian 16 bytes, as Go's Sum(nil). */
  digest(): Uint8Array {
    const out = new Uint8Array(16);
    let h = this.#state;
    for (let i = 15; i >= 0; i--) {
      out[i] = Number(h & 0xffn);
      h >>= 8n;
    }
    return out;
  }

  /** Lower-case hex of the digest (32 characters), as Go's hex.EncodeToString. */
  hex(): string {
    return this.#state.toString(16).padStart(32, "0");
  }
}

/** FNV-128a of data (strings hashed as UTF-8), as 32 lower-case hex characters. */
export function fnv128a(data: Uint8Array | string): string {
  return new Fnv128a().update(data).hex();
}
