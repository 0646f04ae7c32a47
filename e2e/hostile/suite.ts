// The hostile-input sweep: every row of cases.ts created at once against the
// real fleet, then each must end in its own reason within the timeout; after
// the sweep no credential is in any request's or run's status, any Event or
// any service's log, and no controller exited. Prints (and, with
// QUARRY_HOSTILE_REPORT=<file>, writes) the counts per target and per reason
// and the wall time (docs/testing.md, "Hostile input", keeps the counts).
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { type AnyRun, type ResolutionRequest, type RunFlavour, resolutionRequests } from "@quarry/api";
import { kinds } from "@quarry/devcluster/kinds";
import { createRun, resourceOf, runObject, runSucceeded } from "@quarry/harness/runs";
import { createRequest, newRequest, succeeded } from "@quarry/harness/scenario";
import { isApiError } from "@quarry/kube";
import { ADMISSION, CASES, type HostileCase, type Target } from "./cases.ts";
import { credentialCaptureTest } from "./credentials-check.ts";
import { egressCaptureTest } from "./egress-fixture.ts";
import { GLOBAL_TIMEOUT, type HostileWorld, SECRETS, startHostileWorld } from "./fixture.ts";
import { httpCaptureTest } from "./http-fixture.ts";
import { realmCaptureTest } from "./realm-fixture.ts";
import { resolverStatusPolicyTest } from "./status-policy.ts";

const LABELS: Record<Exclude<Target, "lifecycle" | "run">, Record<string, string>> = {
  git: { "resolution.tekton.dev/type": "git" },
  bundles: { "resolution.tekton.dev/type": "bundles" },
  cluster: { "resolution.tekton.dev/type": "cluster" },
  pipe: { "resolution.tekton.dev/type": "pipe" },
  http: { "resolution.tekton.dev/type": "http" },
  hub: { "resolution.tekton.dev/type": "hub" },
};

/** How long every case together may take to end, counted from the last create. */
const SWEEP_TIMEOUT_MS = 180_000;

interface Outcome {
  reason: string | undefined;
  message: string;
}

/** Creates the case's object; an apiserver refusal is its outcome. */
async function create(world: HostileWorld, c: HostileCase): Promise<Outcome | undefined> {
  const { scn, ctx } = world;
  try {
    if (c.request) {
      const { params, labels } = c.request(ctx);
      const target = c.target as keyof typeof LABELS;
      const rr = newRequest(scn.namespace, c.name, labels ?? LABELS[target]);
      rr.spec.params = params;
      await createRequest(scn.admin, rr);
    } else if (c.run) {
      const { flavour, input } = c.run(ctx);
      await createRun(scn.admin, runObject(flavour, scn.namespace, { name: c.name, ...input }));
    }
    return undefined;
  } catch (err) {
    if (isApiError(err) && err.status >= 400 && err.status < 500)
      return { reason: ADMISSION, message: err.message };
    throw err;
  }
}

function requestOutcome(rr: ResolutionRequest): Outcome | undefined {
  const c = succeeded(rr);
  if (!c || c.status === "Unknown") return undefined;
  const reason = c.status === "True" ? "Resolved" : rr.status?.annotations?.["quarry.dev/reason"];
  return { reason, message: c.message ?? "" };
}

function runOutcome(run: AnyRun): Outcome | undefined {
  const c = runSucceeded(run);
  if (!c || c.status === "Unknown") return undefined;
  return { reason: c.status === "True" ? "Succeeded" : c.reason, message: c.message ?? "" };
}

/** Polls the namespace's requests and runs until every pending case has an outcome, or the timeout. */
async function collect(
  world: HostileWorld,
  pending: Map<string, HostileCase>,
  outcomes: Map<string, Outcome>,
) {
  const { scn } = world;
  const deadline = Date.now() + SWEEP_TIMEOUT_MS;
  while (pending.size > 0 && Date.now() < deadline) {
    const objects: [string, Outcome | undefined][] = [];
    for (const rr of (await scn.admin.list<ResolutionRequest>(resolutionRequests, scn.namespace)).items)
      objects.push([rr.metadata.name ?? "", requestOutcome(rr)]);
    for (const flavour of ["CustomRun", "Run"] as RunFlavour[])
      for (const run of (await scn.admin.list<AnyRun>(resourceOf(flavour), scn.namespace)).items)
        objects.push([run.metadata.name ?? "", runOutcome(run)]);
    for (const [name, outcome] of objects) {
      if (outcome && pending.has(name)) {
        outcomes.set(name, outcome);
        pending.delete(name);
      }
    }
    if (pending.size > 0) await new Promise((r) => setTimeout(r, 500));
  }
}

const count = (keys: string[]) => {
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = (out[k] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
};

/** Registers the sweep over every case (full) or the CI subset. */
export function hostileSuite(full: boolean): void {
  const cases = full ? CASES : CASES.filter((c) => c.short);
  let world: HostileWorld | undefined;
  const w = () => {
    if (!world) throw new Error("the hostile world did not start");
    return world;
  };
  before(async () => {
    world = await startHostileWorld();
  });
  after(() => world?.dispose());

  test(`${cases.length} hostile requests and runs each end in their own reason`, {
    timeout: SWEEP_TIMEOUT_MS + 120_000,
  }, async () => {
    const names = new Set<string>();
    for (const c of cases) {
      assert.ok(!names.has(c.name), `case name ${c.name} is used twice`);
      names.add(c.name);
    }
    const started = Date.now();
    const outcomes = new Map<string, Outcome>();
    const pending = new Map<string, HostileCase>();
    await Promise.all(
      cases.map(async (c) => {
        const refused = await create(w(), c);
        if (refused) outcomes.set(c.name, refused);
        else pending.set(c.name, c);
      }),
    );
    await collect(w(), pending, outcomes);
    const wallMs = Date.now() - started;

    const wrong: string[] = [];
    for (const c of cases) {
      const got = outcomes.get(c.name);
      if (!got) wrong.push(`${c.name}: no terminal outcome within ${SWEEP_TIMEOUT_MS / 1000}s`);
      else if (got.reason !== c.reason || !c.message.test(got.message))
        wrong.push(
          `${c.name}: got ${got.reason} ${JSON.stringify(got.message.slice(0, 300))}, want ${c.reason} ${c.message}`,
        );
    }
    const report = {
      mode: full ? "full" : "short",
      cases: cases.length,
      wallSeconds: Math.round(wallMs / 100) / 10,
      globalTimeout: GLOBAL_TIMEOUT,
      perTarget: count(cases.map((c) => c.target)),
      perReason: count(cases.map((c) => c.reason)),
    };
    console.log(`hostile-input report: ${JSON.stringify(report)}`);
    if (process.env.QUARRY_HOSTILE_REPORT)
      writeFileSync(process.env.QUARRY_HOSTILE_REPORT, `${JSON.stringify({ ...report, wrong }, null, 2)}\n`);
    assert.deepEqual(wrong, []);
  });

  test("no credential appears in any status, Event or service log", async () => {
    const { scn } = w();
    const needles = Object.values(SECRETS);
    const places: [string, string][] = [
      [
        "requests",
        JSON.stringify(
          (await scn.admin.list<ResolutionRequest>(resolutionRequests, scn.namespace)).items.map(
            (r) => r.status,
          ),
        ),
      ],
      ["events", JSON.stringify(await scn.admin.list(kinds.Event!, scn.namespace))],
    ];
    for (const flavour of ["CustomRun", "Run"] as RunFlavour[])
      places.push([
        `${flavour}s`,
        JSON.stringify(
          (await scn.admin.list<AnyRun>(resourceOf(flavour), scn.namespace)).items.map((r) => r.status),
        ),
      ]);
    for (const svc of scn.services) places.push([`${svc.name} log`, svc.logs()]);
    const leaks = places.flatMap(([where, text]) =>
      needles.filter((n) => text.includes(n)).map((n) => `${where} holds ${n}`),
    );
    assert.deepEqual(leaks, []);
  });

  test("no controller exited or stopped answering", async () => {
    const { scn } = w();
    const down: string[] = [];
    for (const svc of scn.services) {
      const exited = await Promise.race([
        svc.exited.then(() => true),
        new Promise((r) => setTimeout(r, 0, false)),
      ]);
      if (exited) down.push(`${svc.name} exited`);
      else if ((await svc.ops("/healthz")).status !== 200) down.push(`${svc.name} /healthz`);
    }
    assert.deepEqual(down, []);
  });

  resolverStatusPolicyTest(w);
  credentialCaptureTest(w);
  egressCaptureTest(w);
  realmCaptureTest(w);
  httpCaptureTest(w);
}
