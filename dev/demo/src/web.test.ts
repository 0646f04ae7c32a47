import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import { LINT_TASK, LINT_TASK_BEFORE, sha256, webTraffic } from "./web.ts";

test("names each request by method, path and status", () => {
  assert.equal(
    webTraffic([{ method: "GET", path: "/tasks/lint.yaml", status: 200 }]),
    "1 HTTP request: GET /tasks/lint.yaml (200)",
  );
  assert.equal(
    webTraffic([
      { method: "GET", path: "/tasks/lint.yaml", status: 200 },
      { method: "GET", path: "/tasks/lint.yaml", status: 200 },
    ]),
    "2 HTTP requests: GET /tasks/lint.yaml (200), GET /tasks/lint.yaml (200)",
  );
  assert.equal(webTraffic([]), "no requests");
});

test("sha256 is the digest param's form of the bytes' hash; the earlier content hashes differently", () => {
  const hex = createHash("sha256").update(Buffer.from(LINT_TASK, "utf8")).digest("hex");
  assert.equal(sha256(LINT_TASK), `sha256:${hex}`);
  assert.match(sha256(LINT_TASK), /^sha256:[0-9a-f]{64}$/);
  assert.notEqual(sha256(LINT_TASK_BEFORE), sha256(LINT_TASK));
});
