import assert from "node:assert/strict";
import { test } from "node:test";
import type { AccessEntry } from "@quarry/devcluster/git-server";
import { trafficSince } from "./git.ts";

const entry = (method: string, command?: string): AccessEntry => ({
  method,
  path: method === "GET" ? "/catalog.git/info/refs" : "/catalog.git/git-upload-pack",
  repo: "catalog.git",
  service: "git-upload-pack",
  command,
  status: 200,
  user: undefined,
  at: 0,
});

test("counts protocol v2 commands and capability advertisements since an entry", () => {
  const log = [
    entry("GET"),
    entry("POST", "ls-refs"),
    entry("GET"),
    entry("GET"),
    entry("POST", "ls-refs"),
    entry("POST", "ls-refs"),
    entry("POST", "fetch"),
  ];
  assert.equal(trafficSince({ log }, 2), "5 HTTP requests: 2 capability advertisements, ls-refs ×2, fetch");
  assert.equal(trafficSince({ log }, 7), "no requests");
});
