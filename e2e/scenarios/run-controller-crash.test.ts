// SIGKILL the run-controller while 200 CustomRuns and a few Runs of a kind
// nobody serves wait out their initial-update timeout and 20 Wait runs have
// just had their remote definitions requested (resolver: cluster); restart it.
// Every nobody-run then fails with ControllerNotFound exactly once (one write,
// one Warning Event), no ResolutionRequest is made twice, and the Wait runs
// succeed once the Wait controller starts.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  type ResolutionRequest,
  type RunFlavour,
  type RunRef,
  requestNameFor,
  resolutionRequests,
} from "@quarry/api";
import { applyObject } from "@quarry/devcluster/apply";
import { waitUntil } from "@quarry/devcluster/wait";
import {
  createRun,
  getRun,
  type RunTransitionRecorder,
  recordRunTransitions,
  runEventCountsFor,
  runObject,
  runSucceeded,
  WAIT_REF,
} from "@quarry/harness/runs";
import { newScenario, type Scenario, setConfig } from "@quarry/harness/scenario";
import { terminalStates } from "@quarry/harness/transitions";
import type { KubeClient } from "@quarry/kube";

const TIMEOUT_S = 8;
const NOBODY = { apiVersion: "example.dev/v1", kind: "Nobody" } as const;
const nobodyCustomRuns = Array.from({ length: 200 }, (_, i) => `nobody-${String(i).padStart(3, "0")}`);
const nobodyRuns = Array.from({ length: 6 }, (_, i) => `nobody-run-${i}`);
const waits: [RunFlavour, string][] = Array.from({ length: 20 }, (_, i) =>
  i % 2 === 0 ? ["CustomRun", `wait-c-${i / 2}`] : ["Run", `wait-r-${(i - 1) / 2}`],
);
const WAIT_DEF = "wait-3s";
const waitRef: RunRef = {
  ...WAIT_REF,
  resolver: "cluster",
  params: [
    { name: "kind", value: "task" },
    { name: "name", value: WAIT_DEF },
  ],
};

/** Every ResolutionRequest a watch saw created, by name: the uids it had (two means made twice). */
function recordRequests(client: KubeClient, namespace: string) {
  const created = new Map<string, Set<string>>();
  const abort = new AbortController();
  void (async () => {
    let resourceVersion: string | undefined;
    while (!abort.signal.aborted) {
      try {
        for await (const ev of client.watch<ResolutionRequest>(
          resolutionRequests,
          namespace,
          { resourceVersion },
          abort.signal,
        )) {
          if (ev.type === "ERROR") {
            resourceVersion = undefined;
            break;
          }
          resourceVersion = ev.object.metadata?.resourceVersion ?? resourceVersion;
          const { name, uid } = ev.object.metadata ?? {};
          if (!name || !uid || ev.type === "BOOKMARK") continue;
          created.set(name, (created.get(name) ?? new Set()).add(uid));
        }
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  })();
  return { created, stop: () => abort.abort() };
}

async function inBatches<T>(items: T[], fn: (item: T) => Promise<unknown>) {
  for (let i = 0; i < items.length; i += 20) await Promise.all(items.slice(i, i + 20).map(fn));
}

let scn: Scenario;
let customRunRec: RunTransitionRecorder;
let runRec: RunTransitionRecorder;
let requests: ReturnType<typeof recordRequests>;
before(async () => {
  scn = await newScenario("rc-crash");
  await setConfig(scn, "run-controller-config", {
    "initial-update-timeout": `${TIMEOUT_S}s`,
    "enforcement-grace": "2s",
    // the Wait controller starts only at the end: its runs must not time out meanwhile
    kinds: "- group: wait.testing.tekton.dev\n  kind: Wait\n  initial-update-timeout: 5m\n",
  });
  await applyObject(scn.admin, {
    apiVersion: "tekton.dev/v1",
    kind: "Task",
    metadata: { name: WAIT_DEF, namespace: scn.namespace },
    spec: {
      params: [{ name: "duration", type: "string", default: "3s" }],
      steps: [{ name: "wait", image: "busybox", script: "sleep 3" }],
    },
  });
  customRunRec = recordRunTransitions(scn.admin, "CustomRun", scn.namespace);
  runRec = recordRunTransitions(scn.admin, "Run", scn.namespace);
  requests = recordRequests(scn.admin, scn.namespace);
  await scn.start("lifecycle-controller");
  await scn.start("cluster-resolver");
});
after(async () => {
  customRunRec?.stop();
  runRec?.stop();
  requests?.stop();
  await scn?.cleanup();
});

const transitionsOf = (flavour: RunFlavour, name: string) =>
  (flavour === "CustomRun" ? customRunRec : runRec).transitions.get(name) ?? [];

test("run-controller killed before the initial-update timeout: each run is enforced once, each request made once", {
  timeout: 150_000,
}, async (t) => {
  const first = await scn.start("run-controller");
  await inBatches(waits, ([flavour, name]) =>
    createRun(scn.admin, runObject(flavour, scn.namespace, { name, ref: waitRef })),
  );
  const nobodyStart = Date.now();
  await inBatches(nobodyCustomRuns, (name) =>
    createRun(scn.admin, runObject("CustomRun", scn.namespace, { name, ref: NOBODY })),
  );
  await inBatches(nobodyRuns, (name) =>
    createRun(scn.admin, runObject("Run", scn.namespace, { name, embedded: { ...NOBODY, spec: {} } })),
  );
  // the request each Wait run needs, by Tekton's deterministic name
  const expected = new Map(
    waits.map(([, name]) => [
      name,
      requestNameFor({
        resolverType: "cluster",
        namespace: scn.namespace,
        name,
        spec: { params: waitRef.params ?? [] },
      }),
    ]),
  );
  await waitUntil("every Wait run's request created", () =>
    [...expected.values()].every((rr) => requests.created.has(rr)),
  );

  first.kill("SIGKILL");
  assert.equal((await first.exited).signal, "SIGKILL");
  const killedAfter = Date.now() - nobodyStart;
  t.diagnostic(`killed ${killedAfter} ms after the first nobody-run was created`);
  assert.ok(killedAfter < TIMEOUT_S * 1000 - 500, `killed ${killedAfter} ms after the first nobody-run`);
  const nothingYet = [...nobodyCustomRuns, ...nobodyRuns].filter(
    (n) => transitionsOf(n.startsWith("nobody-run-") ? "Run" : "CustomRun", n).length > 1,
  );
  assert.deepEqual(nothingYet, [], "no run was enforced before the kill");

  await scn.start("run-controller");
  const nobody: [RunFlavour, string][] = [
    ...nobodyCustomRuns.map((n): [RunFlavour, string] => ["CustomRun", n]),
    ...nobodyRuns.map((n): [RunFlavour, string] => ["Run", n]),
  ];
  await waitUntil(
    "every nobody-run terminal",
    () => nobody.every(([f, n]) => terminalStates(transitionsOf(f, n)).length > 0),
    { timeoutMs: 60_000, intervalMs: 500 },
  ).catch((err: Error) => {
    const pending = nobody.filter(([f, n]) => terminalStates(transitionsOf(f, n)).length === 0);
    throw new Error(`${err.message}; ${pending.length} not terminal, e.g. ${pending.slice(0, 5).join("; ")}`);
  });

  await scn.start("wait-task");
  await waitUntil(
    "every Wait run succeeded",
    () => waits.every(([f, n]) => terminalStates(transitionsOf(f, n)).length > 0),
    { timeoutMs: 45_000, intervalMs: 500 },
  );
  // let any stray second write or Event surface before judging
  await new Promise((r) => setTimeout(r, 2000));

  const failures: string[] = [];
  for (const [flavour, name] of nobody) {
    const seq = transitionsOf(flavour, name);
    if (JSON.stringify(seq) !== JSON.stringify(["none", "False/ControllerNotFound"]))
      failures.push(`${flavour} ${name}: ${JSON.stringify(seq)}`);
  }
  assert.deepEqual(failures, [], "each nobody-run went none → False/ControllerNotFound, written once");

  for (const [flavour, name] of nobody.filter((_, i) => i % 25 === 0)) {
    const c = runSucceeded(await getRun(scn.admin, flavour, scn.namespace, name))!;
    assert.equal(
      c.message,
      `no controller initialised the status of this ${flavour} within ${TIMEOUT_S}s: nothing handles Nobody (apiVersion example.dev/v1)`,
    );
  }

  const namesOf = (flavour: RunFlavour) => nobody.filter(([f]) => f === flavour).map(([, n]) => n);
  const events = new Map([
    [
      "CustomRun",
      await runEventCountsFor(
        scn.admin,
        scn.namespace,
        "CustomRun",
        "ControllerNotFound",
        namesOf("CustomRun"),
      ),
    ],
    ["Run", await runEventCountsFor(scn.admin, scn.namespace, "Run", "ControllerNotFound", namesOf("Run"))],
  ]);
  const eventFailures = nobody
    .map(([f, n]) => [f, n, events.get(f)?.get(n)] as const)
    .filter(([, , e]) => e?.objects !== 1 || e.count !== 1)
    .map(([f, n, e]) => `${f} ${n}: ${JSON.stringify(e)}`);
  assert.deepEqual(eventFailures, [], "one Warning Event (count 1) per nobody-run");

  for (const [flavour, name] of waits) {
    const seq = transitionsOf(flavour, name);
    assert.deepEqual(
      terminalStates(seq),
      ["True/DurationElapsed"],
      `${flavour} ${name}: ${JSON.stringify(seq)}`,
    );
    assert.ok(!events.get(flavour)?.has(name), `${flavour} ${name} was not enforced`);
    const run = await getRun(scn.admin, flavour, scn.namespace, name);
    assert.deepEqual(run.status?.results, [{ name: "waited", value: "3s" }], `${name}: the definition's 3s`);
    assert.equal(run.status?.annotations?.["quarry.dev/resolution-request"], expected.get(name));
  }

  // one request per remote run, under its deterministic name, never made twice
  assert.deepEqual(
    [...requests.created].filter(([, uids]) => uids.size !== 1).map(([n]) => n),
    [],
    "a request created twice",
  );
  assert.deepEqual([...requests.created.keys()].sort(), [...expected.values()].sort());
  const list = await scn.admin.list<ResolutionRequest>(resolutionRequests, scn.namespace);
  assert.equal(list.items.length, waits.length);
});
