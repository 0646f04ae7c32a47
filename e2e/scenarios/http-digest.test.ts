// The `digest` param, as Tekton takes it (sha256:<64 hex>, sha512:<128 hex>):
// content that matches resolves and, pinned, is cached in auto mode; content
// that does not fails DigestMismatch naming both hashes.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import { httpOutcome, useHttpScenario } from "@quarry/harness/http-scenario";
import { task } from "@quarry/harness/http-server";
import { resolvedOk, succeeded } from "@quarry/harness/scenario";

const BODY = task("pinned");
const hex = (algorithm: string) => createHash(algorithm).update(BODY).digest("hex");
const world = useHttpScenario("http-digest", {
  setup: async ({ web }) => web.route("/pinned.yaml", (_q, res) => res.end(BODY)),
});

test("sha256 and sha512 digests that match resolve; a pinned request is served from the cache after", async () => {
  const { scn, web } = world();
  const url = `${web.base}/pinned.yaml`;
  for (const algorithm of ["sha256", "sha512"]) {
    const rr = await httpOutcome(scn, `match-${algorithm}`, {
      url,
      digest: `${algorithm}:${hex(algorithm)}`,
    });
    assert.ok(resolvedOk(rr), JSON.stringify(succeeded(rr)));
    assert.deepEqual(rr.status?.refSource?.digest, { sha256: hex("sha256") });
  }
  const fetched = web.hits.get("/pinned.yaml");
  const again = await httpOutcome(scn, "match-again", { url, digest: `sha256:${hex("sha256")}` });
  assert.ok(resolvedOk(again));
  assert.equal(again.status?.annotations?.["resolution.tekton.dev/cached"], "true");
  assert.equal(web.hits.get("/pinned.yaml"), fetched, "auto mode: the digest pins it, no new fetch");
});

test("a digest that does not match fails DigestMismatch; a malformed one fails InvalidParams", async () => {
  const { scn, web } = world();
  const url = `${web.base}/pinned.yaml`;
  for (const [algorithm, digits] of [
    ["sha256", 64],
    ["sha512", 128],
  ] as const) {
    const wrong = "0".repeat(digits);
    const rr = await httpOutcome(scn, `mismatch-${algorithm}`, { url, digest: `${algorithm}:${wrong}` });
    assert.equal(succeeded(rr)?.status, "False");
    assert.equal(succeeded(rr)?.reason, "ResolutionFailed");
    assert.equal(rr.status?.annotations?.["quarry.dev/reason"], "DigestMismatch");
    assert.equal(
      succeeded(rr)?.message,
      `param "digest": the content of ${url} has ${algorithm}:${hex(algorithm)}, not ${algorithm}:${wrong}`,
    );
  }
  const bad = await httpOutcome(scn, "malformed", { url, digest: "md5:0123" });
  assert.equal(bad.status?.annotations?.["quarry.dev/reason"], "InvalidParams");
  assert.match(succeeded(bad)?.message ?? "", /^param "digest": algorithm "md5" is not supported/);
});
