// A run whose remote definition cannot be resolved (a git path or a cluster
// Task that does not exist) ends False/ResolutionFailed through the
// run-controller alone, no custom-task controller running: its message names
// the request and carries the resolver's NotFound message, and
// `quarry describe run` shows that chain of reasons.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import type { AnyRun, ResolutionRequest, RunFlavour } from "@quarry/api";
import { repoRoot } from "@quarry/devcluster/paths";
import {
  recordedRequest,
  runNameFor,
  useRunRefScenario,
  waitRemoteRef,
} from "@quarry/harness/run-ref-scenario";
import { createRun, FLAVOURS, runObject, runSucceeded, waitForRun } from "@quarry/harness/runs";
import { getRequest, succeeded } from "@quarry/harness/scenario";

const exec = promisify(execFile);
const refs = useRunRefScenario("run-ref-failed", {
  resolvers: ["git", "cluster"],
  gitFiles: { "tasks/wait.yaml": "# not the file the runs ask for\n" },
});

/** Creates the run, waits for it to end, returns it with its request. */
async function failedRun(
  flavour: RunFlavour,
  base: string,
  resolver: string,
  params: Record<string, string>,
): Promise<{ run: AnyRun; rr: ResolutionRequest }> {
  const { scn } = refs();
  const name = runNameFor(base, flavour);
  await createRun(
    scn.admin,
    runObject(flavour, scn.namespace, { name, ref: waitRemoteRef(resolver, params) }),
  );
  const run = await waitForRun(scn, flavour, name);
  const requestName = recordedRequest(run);
  assert.ok(requestName, `${name}: no request recorded: ${JSON.stringify(run.status)}`);
  assert.deepEqual(
    run.status?.childReferences?.map((c) => c.name),
    [requestName],
  );
  return { run, rr: await getRequest(scn.admin, scn.namespace, requestName) };
}

function assertResolutionFailed(run: AnyRun, rr: ResolutionRequest, resolverMessage: RegExp) {
  const rrCond = succeeded(rr);
  assert.equal(rrCond?.status, "False", JSON.stringify(rr.status));
  assert.equal(rr.status?.annotations?.["quarry.dev/reason"], "NotFound");
  assert.match(rrCond?.message ?? "", resolverMessage);
  const c = runSucceeded(run)!;
  assert.equal(c.status, "False", c.message);
  assert.equal(c.reason, "ResolutionFailed");
  assert.ok(c.message?.includes(`ResolutionRequest ${rr.metadata.name}`), c.message);
  assert.ok(c.message?.includes("NotFound"), c.message);
  assert.ok(c.message?.includes(rrCond?.message ?? "<none>"), `${c.message} lacks ${rrCond?.message}`);
  assert.ok(run.status?.completionTime, "a failed run is complete");
}

const expected = new Map<string, { run: AnyRun; rr: ResolutionRequest }>();

test("a git path that does not exist: the run fails ResolutionFailed with git's NotFound", async () => {
  const { gitUrl } = refs();
  await Promise.all(
    FLAVOURS.map(async (flavour) => {
      const got = await failedRun(flavour, "git-missing", "git", {
        url: gitUrl,
        revision: "main",
        pathInRepo: "tasks/nope.yaml",
      });
      assertResolutionFailed(got.run, got.rr, /param "pathInRepo": no such file "tasks\/nope\.yaml"/);
      expected.set(runNameFor("git-missing", flavour), got);
    }),
  );
});

test("a cluster Task that does not exist: the run fails ResolutionFailed with the cluster resolver's NotFound", async () => {
  await Promise.all(
    FLAVOURS.map(async (flavour) => {
      const got = await failedRun(flavour, "cluster-missing", "cluster", { kind: "task", name: "absent" });
      assertResolutionFailed(got.run, got.rr, /task .*\/absent not found/);
      expected.set(runNameFor("cluster-missing", flavour), got);
    }),
  );
});

test("quarry describe run shows the reason chain down to the request's NotFound", async () => {
  const { scn } = refs();
  assert.equal(expected.size, 4, "the failures above ran first");
  for (const [name, { run, rr }] of expected) {
    const { stdout } = await exec(
      process.execPath,
      [join(repoRoot, "cli", "src", "main.ts"), "describe", "run", name, "-n", scn.namespace],
      { env: { ...process.env, KUBECONFIG: scn.cp.adminKubeconfig }, timeout: 30_000 },
    );
    const chain = stdout.slice(stdout.indexOf("Reason Chain:"), stdout.indexOf("Conditions:"));
    assert.ok(chain.startsWith("Reason Chain:"), stdout);
    const lines = chain.split("\n").filter((l) => l.trim());
    assert.equal(lines.length, 3, chain);
    assert.ok(
      lines[1]?.includes(`${run.kind} failed: ResolutionFailed: ${runSucceeded(run)?.message}`),
      `${lines[1]}\nin:\n${stdout}`,
    );
    assert.ok(
      lines[2]?.includes(
        `← ResolutionRequest ${rr.metadata.name} failed: ResolutionFailed (NotFound): ${succeeded(rr)?.message}`,
      ),
      `${lines[2]}\nin:\n${stdout}`,
    );
    assert.match(stdout, /Succeeded:\s+False \(ResolutionFailed\)/);
    assert.match(stdout, new RegExp(`${rr.metadata.name}\\s.*False ResolutionFailed \\(NotFound\\)`));
  }
});
