// TEP-0100: a run records its remote definition by reference, never by
// value. A ~900 KiB Task (under the 1 MiB resolved-data cap) resolves into a
// ResolutionRequest whose status.data is ~1.2 MB of base64, while the run's
// whole status stays under 4 KiB and holds no part of the data, both once
// resolved and once Wait has run it to completion.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import type { AnyRun } from "@quarry/api";
import {
  ANNOTATION_RUN_REF_SOURCE,
  recordedRequest,
  runNameFor,
  useRunRefScenario,
  waitRemoteRef,
  waitTaskYaml,
} from "@quarry/harness/run-ref-scenario";
import { createRun, FLAVOURS, runObject, runSucceeded, waitForRun } from "@quarry/harness/runs";
import { dataOf, getRequest, resolvedOk, waitForRequest } from "@quarry/harness/scenario";

const MARKER = `quarry-big-${randomBytes(6).toString("hex")}`;
const TARGET_BYTES = 900 * 1024;
const LIMIT_BYTES = 1024 * 1024;
const STATUS_LIMIT = 4 * 1024;

/** A Wait Task whose step script carries ~900 KiB of comment lines, each with MARKER. */
function bigTask(): string {
  const head = waitTaskYaml("big-wait", "1s").replace("script: sleep 1\n", "script: |\n        sleep 1\n");
  const line = `        # ${MARKER} ${"x".repeat(100)}\n`;
  const lines = Math.floor((TARGET_BYTES - head.length) / line.length);
  return head + line.repeat(lines);
}
const BIG = bigTask();

const refs = useRunRefScenario("run-small", {
  resolvers: ["git"],
  gitFiles: { "tasks/big-wait.yaml": BIG },
});

/** Serialised status, checked for size and for any trace of the definition's bytes. */
function assertSmallStatus(run: AnyRun, base64: string, when: string) {
  const json = JSON.stringify(run.status);
  assert.ok(json.length < STATUS_LIMIT, `${when}: status is ${json.length} bytes: ${json.slice(0, 500)}`);
  assert.ok(!json.includes(MARKER), `${when}: status holds the definition's text`);
  // any 32-character window of the encoded data (never present by chance)
  for (let at = 0; at + 32 <= base64.length; at += Math.floor(base64.length / 64)) {
    assert.ok(!json.includes(base64.slice(at, at + 32)), `${when}: status holds base64 data at ${at}`);
  }
  assert.ok(!json.includes('"data"'), `${when}: status has a data field`);
}

test("a ~900 KiB definition resolves; the run's status stays under 4 KiB with no part of the data", async () => {
  const { scn, gitUrl, gitCommit } = refs();
  assert.ok(
    BIG.length > TARGET_BYTES - 1024 && BIG.length < LIMIT_BYTES,
    `definition is ${BIG.length} bytes`,
  );
  const params = { url: gitUrl, revision: "main", pathInRepo: "tasks/big-wait.yaml" };
  await Promise.all(
    FLAVOURS.map(async (flavour) => {
      const name = runNameFor("big", flavour);
      await createRun(
        scn.admin,
        runObject(flavour, scn.namespace, { name, ref: waitRemoteRef("git", params) }),
      );
      // the run-controller records the request, then its refSource once resolved
      const recorded = await waitForRun(
        scn,
        flavour,
        name,
        (r) => r.status?.annotations?.[ANNOTATION_RUN_REF_SOURCE] !== undefined,
      );
      const requestName = recordedRequest(recorded)!;
      const rr = await waitForRequest(scn, requestName, resolvedOk);
      assert.equal(dataOf(rr), BIG);
      const base64 = rr.status?.data ?? "";
      assert.ok(base64.length > 1_200_000, `request data is ${base64.length} bytes of base64`);
      assert.deepEqual(recorded.status?.provenance?.refSource, {
        uri: `git+${gitUrl}`,
        digest: { sha1: gitCommit },
        entryPoint: "tasks/big-wait.yaml",
      });
      assert.equal(runSucceeded(recorded), undefined, "nothing handles Wait yet");
      assertSmallStatus(recorded, base64, `${flavour} resolved`);
    }),
  );

  // Wait reads the definition from the request and runs it to completion; the status stays small
  await scn.start("wait-task");
  await Promise.all(
    FLAVOURS.map(async (flavour) => {
      const run = await waitForRun(scn, flavour, runNameFor("big", flavour));
      const c = runSucceeded(run)!;
      assert.equal(c.status, "True", c.message);
      assert.equal(c.reason, "DurationElapsed");
      assert.deepEqual(run.status?.results, [{ name: "waited", value: "1s" }]);
      const rr = await getRequest(scn.admin, scn.namespace, recordedRequest(run)!);
      assertSmallStatus(run, rr.status?.data ?? "", `${flavour} succeeded`);
    }),
  );
});
