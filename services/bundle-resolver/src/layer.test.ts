import assert from "node:assert/strict";
import { test } from "node:test";
import { gzipSync } from "node:zlib";
import { pack } from "tar-stream";
import { extractLayerObject, LayerError } from "./layer.ts";

async function tarOf(entries: { name: string; content: string | Buffer }[]): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  p.on("data", (c: unknown) => chunks.push(Buffer.from(c as Uint8Array)));
  const done = new Promise<void>((resolve) => p.on("end", () => resolve()));
  for (const e of entries) p.entry({ name: e.name }, e.content);
  p.finalize();
  await done;
  return Buffer.concat(chunks);
}

const TASK = "apiVersion: tekton.dev/v1\nkind: Task\nmetadata: {name: build}\n";

test("gzip tar with one file (as tkn writes it) gives the file", async () => {
  const blob = gzipSync(await tarOf([{ name: "build", content: TASK }]));
  assert.equal((await extractLayerObject(blob, 1 << 20)).toString(), TASK);
});

test("plain tar and raw layers are read too", async () => {
  assert.equal(
    (await extractLayerObject(await tarOf([{ name: "x", content: TASK }]), 1 << 20)).toString(),
    TASK,
  );
  assert.equal((await extractLayerObject(Buffer.from(TASK), 1 << 20)).toString(), TASK);
});

test("a tar with two files is refused, naming them", async () => {
  const blob = await tarOf([
    { name: "a", content: TASK },
    { name: "b", content: TASK },
  ]);
  await assert.rejects(
    extractLayerObject(blob, 1 << 20),
    (e: unknown) => e instanceof LayerError && /2 files \("a", "b"\)/.test(e.message),
  );
});

test("a gzip that expands past the cap is TooLarge, without expanding it all", async () => {
  const bomb = gzipSync(Buffer.alloc(8 << 20));
  assert.ok(bomb.length < 64 << 10);
  await assert.rejects(
    extractLayerObject(bomb, 1 << 20),
    (e: unknown) => e instanceof LayerError && e.tooLarge,
  );
});

test("corrupt gzip is an InvalidBundle-style error, not a crash", async () => {
  const blob = gzipSync(Buffer.from(TASK));
  blob.writeUInt8((blob.readUInt8(blob.length - 6) ^ 0xff) & 0xff, blob.length - 6);
  await assert.rejects(
    extractLayerObject(blob, 1 << 20),
    (e: unknown) => e instanceof LayerError && !e.tooLarge,
  );
});
