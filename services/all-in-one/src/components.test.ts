import assert from "node:assert/strict";
import { test } from "node:test";
import { COMPONENTS, parseComponents } from "./components.ts";

test("unset or empty QUARRY_COMPONENTS runs every component", () => {
  assert.deepEqual(parseComponents(undefined), [...COMPONENTS]);
  assert.deepEqual(parseComponents(""), [...COMPONENTS]);
  assert.deepEqual(parseComponents(" , "), [...COMPONENTS]);
});

test("a list runs those, in wiring order, each once", () => {
  assert.deepEqual(parseComponents("git, lifecycle,cluster,git"), ["lifecycle", "cluster", "git"]);
  assert.deepEqual(parseComponents("hub"), ["hub"]);
});

test("an unknown name is refused, naming it and the known ones", () => {
  assert.throws(
    () => parseComponents("lifecycle,gti"),
    /QUARRY_COMPONENTS: unknown gti \(known: lifecycle,run,cluster,git,bundle,pipe,http,hub\)/,
  );
});
