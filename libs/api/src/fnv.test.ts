import assert from "node:assert/strict";
import { test } from "node:test";
import { Fnv128a, fnv128a } from "./fnv.ts";

// Vectors computed with Go's hash/fnv New128a.
test("fnv128a matches Go's hash/fnv New128a", () => {
  assert.equal(fnv128a(""), "6c62272e07bb014262b821756295c58d");
  assert.equal(fnv128a("a"), "d228cb696f1a8caf78912b704e4a8964");
  assert.equal(fnv128a("foobar"), "343e1662793c64bf6f0d3597ba446f18");
  assert.equal(fnv128a(new TextEncoder().encode("namespace/name")), "e5859ecb4d7305ca021e3aadf1bd0d06");
});

test("streaming updates equal one update of the concatenation", () => {
  const h = new Fnv128a().update("name").update("space/").update(new TextEncoder().encode("name"));
  assert.equal(h.hex(), fnv128a("namespace/name"));
  assert.equal(Buffer.from(h.digest()).toString("hex"), h.hex());
});

test("the digest keeps leading zero bytes", () => {
  const h = new Fnv128a().update("2436000"); // Go: 0005d3df504ff78ce98c68b7cfb1a0ce
  assert.equal(h.hex(), "0005d3df504ff78ce98c68b7cfb1a0ce");
  assert.equal(h.digest()[0], 0);
  assert.equal(Buffer.from(h.digest()).toString("hex"), h.hex());
});
