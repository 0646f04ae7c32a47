// A bundle layer's bytes → the one Tekton object it holds. Layers are tar
// archives (tkn writes them gzip-compressed) with exactly one regular file.
// Decompression is capped, so a small gzip cannot expand without bound.
import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import { extract } from "tar-stream";

const gunzipAsync = promisify(gunzip);

export class LayerError extends Error {
  readonly tooLarge: boolean;
  constructor(message: string, tooLarge = false) {
    super(message);
    this.name = "LayerError";
    this.tooLarge = tooLarge;
  }
}

const isGzip = (b: Uint8Array) => b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;

/** A ustar/gnu/pax header has "ustar" at offset 257; v7 tars are not produced by any bundle tool. */
const isTar = (b: Uint8Array) =>
  b.length >= 512 && Buffer.from(b.subarray(257, 262)).toString("latin1") === "ustar";

/**
 * Extracts the single object of a layer. A layer that is neither gzip nor tar
 * is taken as the raw object, as Tekton does for hand-built bundles.
 */
export async function extractLayerObject(blob: Uint8Array, maxBytes: number): Promise<Buffer> {
  let bytes = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength);
  if (isGzip(bytes)) {
    try {
      bytes = await gunzipAsync(bytes, { maxOutputLength: maxBytes });
    } catch (err) {
      if (err instanceof RangeError || (err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") {
        throw new LayerError(`layer expands to more than ${maxBytes} bytes`, true);
      }
      throw new LayerError(`layer is not valid gzip: ${(err as Error).message}`);
    }
  }
  if (bytes.length > maxBytes) throw new LayerError(`layer is ${bytes.length} bytes, over ${maxBytes}`, true);
  if (!isTar(bytes)) return bytes;
  return singleTarEntry(bytes);
}

async function singleTarEntry(tar: Buffer): Promise<Buffer> {
  const files: { name: string; data: Buffer }[] = [];
  const ex = extract();
  const done = new Promise<void>((resolve, reject) => {
    ex.on("entry", (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on("data", (c: unknown) => chunks.push(Buffer.from(c as Uint8Array)));
      stream.on("end", () => {
        if (header.type === "file" || header.type === "contiguous-file") {
          files.push({ name: header.name, data: Buffer.concat(chunks) });
        }
        next();
      });
      stream.on("error", reject);
    });
    ex.on("finish", resolve);
    ex.on("error", reject);
  });
  ex.end(tar);
  try {
    await done;
  } catch (err) {
    throw new LayerError(`layer is not a valid tar archive: ${(err as Error).message}`);
  }
  if (files.length !== 1) {
    const names = files.map((f) => JSON.stringify(f.name)).join(", ");
    throw new LayerError(
      `layer tar holds ${files.length} files (${names || "none"}); a bundle layer holds exactly one`,
    );
  }
  return files[0]?.data ?? Buffer.alloc(0);
}
