import assert from "node:assert/strict";
import { test } from "node:test";
import { FlagError, loadFlags, parseFlags, usage } from "./benchmark.ts";

const FLAGS = {
  ...loadFlags(500),
  rate: { type: "int", default: 0, min: 0, help: "requests/s" },
  sleep: { type: "number", default: 2, min: 0, help: "seconds" },
  floor: { type: "boolean", default: true, help: "skip the floor" },
  "closed-loop": { type: "boolean", help: "closed loop" },
  phases: { type: "list", default: "cold,hot", choices: ["cold", "new-commit", "hot"], help: "phases" },
  replicas: { type: "ints", default: "1,3", min: 1, help: "replica counts" },
  "git-config": { type: "multiple", help: "K=V" },
  flavour: { type: "string", default: "CustomRun", choices: ["CustomRun", "Run"], help: "flavour" },
  files: { type: "int", min: 1, help: "files" },
} as const;

test("parseFlags: defaults when nothing is given", () => {
  const f = parseFlags(FLAGS, []);
  assert.equal(f.requests, 500);
  assert.equal(f.concurrency, 16);
  assert.equal(f["log-level"], "info");
  assert.equal(f.samples, undefined);
  assert.equal(f.floor, true);
  assert.equal(f["closed-loop"], false);
  assert.deepEqual(f.phases, ["cold", "hot"]);
  assert.deepEqual(f.replicas, [1, 3]);
  assert.deepEqual(f["git-config"], []);
  assert.equal(f.files, undefined);
  assert.equal(f.help, false);
});

test("parseFlags: values, --no-x, repeatable flags, lists in the choices' order, ints in the given order", () => {
  const f = parseFlags(FLAGS, [
    "--requests",
    "10",
    "--sleep=0.5",
    "--no-floor",
    "--closed-loop",
    "--phases",
    "hot,cold,new-commit",
    "--replicas",
    "3,1,3",
    "--git-config",
    "a=b",
    "--git-config",
    "c=d",
    "--flavour",
    "Run",
  ]);
  assert.equal(f.requests, 10);
  assert.equal(f.sleep, 0.5);
  assert.equal(f.floor, false);
  assert.equal(f["closed-loop"], true);
  assert.deepEqual(f.phases, ["cold", "new-commit", "hot"]);
  assert.deepEqual(f.replicas, [3, 1, 3]);
  assert.deepEqual(f["git-config"], ["a=b", "c=d"]);
  assert.equal(f.flavour, "Run");
});

test("parseFlags: a bad value says which flag and why", () => {
  const bad = (args: string[], why: RegExp) =>
    assert.throws(
      () => parseFlags(FLAGS, args),
      (e) => e instanceof FlagError && why.test(e.message),
    );
  bad(["--requests", "x"], /--requests must be an integer/);
  bad(["--requests", "0"], /--requests must be at least 1/);
  bad(["--rate", "1.5"], /--rate must be an integer/);
  bad(["--sleep=-1"], /--sleep must be at least 0/);
  bad(["--phases", "cold,warm"], /--phases takes a subset of cold,new-commit,hot \("warm" is not one\)/);
  bad(["--replicas", "1,0"], /--replicas must be at least 1/);
  bad(["--flavour", "Job"], /--flavour must be one of CustomRun, Run/);
  bad(["--unknown"], /Unknown option '--unknown'/);
});

test("usage: one line per flag with its default, booleans that default on as --no-x", () => {
  const text = usage("demo", "What it measures.", FLAGS, "Notes.");
  const lines = text.split("\n");
  assert.equal(lines[0], "usage: node bench/demo.ts [options]");
  assert.equal(lines[1], "What it measures.");
  assert.ok(lines.some((l) => /^ {2}--requests N +measured requests \(default 500\)$/.test(l)));
  assert.ok(lines.some((l) => /^ {2}--no-floor +skip the floor$/.test(l)));
  assert.ok(lines.some((l) => /^ {2}--closed-loop +closed loop$/.test(l)));
  assert.ok(lines.some((l) => /^ {2}--phases LIST +phases \(default cold,hot\)$/.test(l)));
  assert.ok(lines.some((l) => /^ {2}--help +this text$/.test(l)));
  assert.equal(lines.at(-1), "Notes.");
});
