import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";
import { childrenMentioning, parentOf, stopPids } from "./children.ts";

test("parentOf reads ppid past a command name with spaces and parens", () => {
  assert.equal(parentOf("4242 (kube apiserver) S 17 4242 4242 0 -1"), 17);
  assert.equal(parentOf("7 (a) b) R 1 7 7"), 1);
});

test("finds a child by a marker in its command line and stops it", {
  skip: !childrenMentioning("x"),
}, async () => {
  const marker = `quarry-children-test-${process.pid}`;
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", marker], { stdio: "ignore" });
  const exited = new Promise((r) => child.once("exit", r));
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(childrenMentioning(marker), [child.pid]);
  await stopPids([child.pid!]);
  await exited;
  assert.deepEqual(childrenMentioning(marker), []);
});
