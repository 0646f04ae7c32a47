// The demo's custom-task runs (TEP-0002): a Wait that succeeds, a Wait
// cancelled the way a PipelineRun cancels its CustomRuns, a Wait whose
// definition comes from git (its ResolutionRequest created by the
// run-controller, its provenance recorded), and a run of a kind nobody serves,
// which the run-controller fails with ControllerNotFound.
import { type AnyRun, getCondition, RESOLUTION_REQUEST_KIND } from "@quarry/api";
import { cancelRun, createRun, getRun, runDone, runObject, WAIT_REF } from "@quarry/devcluster/runs";
import { waitUntil } from "@quarry/devcluster/wait";
import { DEMO_INITIAL_UPDATE_TIMEOUT, type DemoCluster } from "./cluster.ts";
import { WAIT_PATH } from "./git.ts";
import type { Narrator } from "./narrator.ts";
import { runOutcome } from "./summary.ts";

export interface RunResults {
  waited: AnyRun;
  cancelled: AnyRun;
  fromGit: AnyRun;
  nobody: AnyRun;
}

export function outcomeText(run: AnyRun): string {
  const c = getCondition(run, "Succeeded");
  return c ? `Succeeded=${c.status} ${c.reason ?? ""}${c.message ? `: ${c.message}` : ""}` : "not started";
}

/** Polls the CustomRun until `check` holds and says its outcome and how long it took. */
export async function until(
  c: DemoCluster,
  n: Narrator,
  name: string,
  what: string,
  check: (run: AnyRun) => boolean,
  timeoutMs = 30_000,
) {
  const started = Date.now();
  const run = await n.waitFor(
    `${name}: ${what}`,
    waitUntil(
      `${name}: ${what}`,
      async () => {
        const run = await getRun(c.admin, "CustomRun", c.namespace, name);
        return check(run) ? run : undefined;
      },
      { timeoutMs, intervalMs: 100 },
    ),
  );
  n.say(
    `  ${`${c.namespace}/${name}`.padEnd(30)} ${outcomeText(run)} (after ${((Date.now() - started) / 1000).toFixed(1)}s)`,
  );
  return run;
}

/** Fails the demo, saying how the run ended, unless it ended as the story expects. */
export function expect(run: AnyRun, status: string, reason: string): AnyRun {
  const cond = getCondition(run, "Succeeded");
  if (cond?.status !== status || cond.reason !== reason)
    throw new Error(`${run.metadata.name} ended ${outcomeText(run)}, expected ${status}/${reason}`);
  return run;
}

export async function runRunStories(c: DemoCluster, n: Narrator): Promise<RunResults> {
  const ns = c.namespace;
  const create = (name: string, input: Omit<Parameters<typeof runObject>[2], "name">) =>
    createRun(c.admin, runObject("CustomRun", ns, { name, ...input }));

  n.say("(12) a CustomRun of TEP-0002's Wait, duration 1s: the Wait controller (customtask-sdk) runs it");
  const waited = await n.record(
    "(12)",
    "a Wait run of 1s",
    async () => {
      await create("wait-1s", { ref: WAIT_REF, params: [{ name: "duration", value: "1s" }] });
      return expect(await until(c, n, "wait-1s", "done", runDone), "True", "DurationElapsed");
    },
    runOutcome,
  );

  n.say("(13) a Wait of 1m cancelled as a PipelineRun cancels its CustomRuns (spec.status: RunCancelled)");
  const cancelled = await n.record(
    "(13)",
    "a Wait run of 1m, cancelled",
    async () => {
      await create("wait-cancelled", { ref: WAIT_REF, params: [{ name: "duration", value: "1m" }] });
      await until(
        c,
        n,
        "wait-cancelled",
        "running",
        (r) => getCondition(r, "Succeeded")?.reason === "Running",
      );
      await cancelRun(c.admin, "CustomRun", ns, "wait-cancelled");
      return expect(await until(c, n, "wait-cancelled", "done", runDone), "False", "CustomRunCancelled");
    },
    runOutcome,
  );

  n.say(
    `(14) a Wait whose definition comes from git (customRef resolver: git, pathInRepo ${WAIT_PATH}, no duration param)`,
  );
  const fromGit = await n.record(
    "(14)",
    `a Wait run defined in git: ${WAIT_PATH}`,
    async () => {
      await create("wait-from-git", {
        ref: {
          ...WAIT_REF,
          resolver: "git",
          params: [
            { name: "url", value: c.repo.url },
            { name: "revision", value: "main" },
            { name: "pathInRepo", value: WAIT_PATH },
          ],
        },
      });
      return expect(await until(c, n, "wait-from-git", "done", runDone), "True", "DurationElapsed");
    },
    runOutcome,
  );
  const child = fromGit.status?.childReferences?.find((r) => r.kind === RESOLUTION_REQUEST_KIND);
  const ref = fromGit.status?.provenance?.refSource;
  n.say(
    `  the run-controller created ResolutionRequest ${child?.name ?? "?"}; the run waited the definition's default`,
  );
  if (ref)
    n.say(
      `  provenance: ${ref.uri} ${Object.entries(ref.digest)
        .map(([a, d]) => `${a}:${d.slice(0, 12)}`)
        .join(" ")} ${ref.entryPoint ?? ""}`,
    );

  n.say(
    `(15) a CustomRun of a kind no controller serves: the run-controller fails it after ${DEMO_INITIAL_UPDATE_TIMEOUT}`,
  );
  const nobody = await n.record(
    "(15)",
    "a run of a kind no controller serves",
    async () => {
      await create("deploy-nobody", { ref: { apiVersion: "example.dev/v1", kind: "Deploy" } });
      return expect(await until(c, n, "deploy-nobody", "done", runDone), "False", "ControllerNotFound");
    },
    runOutcome,
  );
  return { waited, cancelled, fromGit, nobody };
}
