// A response body read with a cap: a source that answers more than a
// resolution may hold is cut off at the cap, not buffered whole first.
import { MAX_RESOLVED_DATA_BYTES, readCapped } from "@quarry/api";
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
  const bytes = await readCapped(res.body, maxBytes);
  if (!bytes) throw tooLarge();
  return bytes;
}

/** 1 MiB, 64 KiB or 1000 bytes: the words the size checks' messages use. */
function sizeText(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes}-byte`;
}
