// A response body read with a cap: a source that answers more than a
// resolution may hold is cut off at the cap, not buffered whole first.
import { MAX_RESOLVED_DATA_BYTES } from "@quarry/api";
import { ResolutionError } from "./errors.ts";

/**
 * The body's bytes, at most `maxBytes` (default: the 1 MiB limit on resolved
 * data); past it the stream is cancelled and a TooLarge ResolutionError names `what`.
 */
export async function readCappedBody(
  res: Response,
  what: string,
  maxBytes: number = MAX_RESOLVED_DATA_BYTES,
): Promise<Uint8Array> {
  const tooLarge = () =>
    new ResolutionError("TooLarge", `${what} is over the ${sizeText(maxBytes)} limit for resolved data`);
  const declared = Number(res.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel();
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (res.body) {
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel();
        throw tooLarge();
      }
      chunks.push(value);
    }
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** 1 MiB, 64 KiB or 1000 bytes: the words the size checks' messages use. */
function sizeText(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes}-byte`;
}
