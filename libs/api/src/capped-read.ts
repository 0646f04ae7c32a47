// A body read with a cap: a peer that sends more than the caller may hold is
// cut off at the cap instead of being buffered whole first.

/**
 * The stream's bytes, or `undefined` as soon as they pass `maxBytes` (the
 * stream is then cancelled). `onChunk` sees every chunk kept, e.g. to hash it.
 */
export async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  onChunk?: (chunk: Uint8Array) => void,
): Promise<Buffer | undefined> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (body) {
    const reader = body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel();
        return undefined;
      }
      onChunk?.(value);
      chunks.push(value);
    }
  }
  return Buffer.concat(chunks, total);
}
