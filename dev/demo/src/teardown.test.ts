import assert from "node:assert/strict";
import { test } from "node:test";
import { Teardown } from "./teardown.ts";

test("runs newest first, once, and keeps going past a failing step", async () => {
  const t = new Teardown();
  const order: string[] = [];
  t.add("control plane", async () => order.push("cp"));
  t.add("controller", async () => {
    order.push("controller");
    throw new Error("boom");
  });
  t.add("namespace", async () => order.push("ns"));
  const reports: string[] = [];
  await Promise.all([t.run((m) => reports.push(m)), t.run((m) => reports.push(m))]);
  await t.run((m) => reports.push(m));
  assert.deepEqual(order, ["ns", "controller", "cp"]);
  assert.deepEqual(reports, ["could not stop controller: boom"]);
});
