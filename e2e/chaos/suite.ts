// The chaos run: a mixed load created at a steady pace while the faults run one
// after another (faults.ts); then every request must end in exactly one
// terminal Succeeded condition (True, or False with a quarry.dev/reason) of
// those its kind allows, with the data the load expects where it knows it, none
// lost, none resolved twice (ledger.ts); every run must end in exactly one
// terminal Succeeded condition of those its kind allows, none finished twice,
// its status small (run-ledger.ts); the runs' own requests each end once too;
// no service crashed, and each service's RSS is compared with its value before
// the load. Prints (and, with
// QUARRY_CHAOS_REPORT=<file>, writes) the counts per fault and per outcome and
// the RSS figures.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { type AnyRun, type ResolutionRequest, resolutionRequests } from "@quarry/api";
import { e2eMode } from "@quarry/harness/env";
import { FLAVOURS, resourceOf, runSucceeded } from "@quarry/harness/runs";
import { dataOf, succeeded } from "@quarry/harness/scenario";
import { type FaultTimings, faultsFor } from "./faults.ts";
import { isTerminal, type Ledger, startLedger } from "./ledger.ts";
import {
  expectedRequestOutcomes,
  expectedRunOutcomes,
  isRun,
  kindsOf,
  launch,
  type PlannedItem,
  type PlannedRequest,
  planItem,
} from "./load.ts";
import { rssMiB } from "./rss.ts";
import { type RunLedger, runHistoryProblems, runKey, startRunLedger } from "./run-ledger.ts";
import { type ChaosWorld, type ServiceName, servicesOf, startChaosWorld } from "./world.ts";

interface ChaosForm {
  mode: "short" | "full";
  /** Items of the load: seven requests, then four runs, in turn (load.ts). */
  items: number;
  /** Quiet time after each fault, the load still running (recovery is counted in it). */
  gapMs: number;
  timings: FaultTimings;
  /** The watch watchdog (QUARRY_WATCH_WATCHDOG) the services run with. */
  watchdog: string;
  /** How long the faults take, roughly: the load is paced to span them. */
  plannedMs: number;
  /** After the last create: how long every request may take to end. */
  collectMs: number;
  /** Idle time after the load before RSS is read again. */
  settleMs: number;
  /** A real node joins the control plane, and pipe requests the load (one in ten). */
  pipes: boolean;
}

const SHORT: ChaosForm = {
  mode: "short",
  // 20 of each of the 11 kinds
  items: 220,
  gapMs: 2_000,
  timings: {
    killedDownMs: 1_500,
    etcdFrozenMs: 5_000,
    gitDownMs: 8_000,
    registryDownMs: 8_000,
    stallRecoveryMs: 150_000,
    stallWindowMs: 10_000,
  },
  watchdog: "10s",
  plannedMs: 120_000,
  collectMs: 180_000,
  settleMs: 15_000,
  pipes: false,
};

const FULL: ChaosForm = {
  mode: "full",
  items: 1_350,
  gapMs: 5_000,
  timings: {
    killedDownMs: 3_000,
    etcdFrozenMs: 10_000,
    gitDownMs: 30_000,
    registryDownMs: 30_000,
    stallRecoveryMs: 300_000,
    stallWindowMs: 20_000,
  },
  watchdog: "20s",
  plannedMs: 250_000,
  collectMs: 300_000,
  settleMs: 30_000,
  pipes: true,
};

/** RSS may end at most this much above its value before the load. */
const RSS_TOLERANCE = 0.2;
/** A run's status holds references, never a child's status or data: it stays this small. */
const RUN_STATUS_LIMIT = 4 * 1024;

const count = (keys: string[]) => {
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = (out[k] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
};

function rssOfAll(world: ChaosWorld): Partial<Record<ServiceName, number>> {
  return Object.fromEntries(world.services.map((s) => [s, rssMiB(world.current.get(s)?.pid ?? -1)]));
}

interface Ledgers {
  requests: Ledger;
  runs: RunLedger;
}

/** The ledger's key of an item: a request's name, or `<flavour>/<name>` for a run. */
const keyOf = (p: PlannedItem) => (isRun(p) ? runKey(p.flavour, p.name) : p.name);

async function waitTerminal(ledgers: Ledgers, items: PlannedItem[], timeoutMs: number): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  const ended = (p: PlannedItem) =>
    (isRun(p) ? ledgers.runs.histories.get(keyOf(p)) : ledgers.requests.histories.get(p.name))?.states.some(
      isTerminal,
    );
  let pending = items;
  while (Date.now() < deadline) {
    pending = pending.filter((p) => !ended(p));
    if (pending.length === 0) break;
    await sleep(1_000);
  }
  return pending.map(keyOf);
}

/** A few items of every kind, ended, so each service has loaded its code paths before RSS is read. */
async function warmUp(world: ChaosWorld, ledgers: Ledgers): Promise<void> {
  const warm = Array.from({ length: kindsOf(world).length * 2 }, (_, i) => planItem(world, "warm", i));
  await Promise.all(warm.map((p) => launch(world, p, Date.now() + 60_000)));
  const pending = await waitTerminal(ledgers, warm, 120_000);
  assert.deepEqual(pending, [], "the warm-up items end");
}

/** The label the run-controller puts on the requests it creates for runs (its wire contract). */
const LABEL_RUN = "quarry.dev/run";

/** The requests the run-controller created for runs (labelled quarry.dev/run), by name. */
async function runRequests(world: ChaosWorld): Promise<ResolutionRequest[]> {
  const list = await world.scn.admin.list<ResolutionRequest>(resolutionRequests, world.scn.namespace, {
    labelSelector: LABEL_RUN,
  });
  return list.items;
}

/** Registers the chaos run in its short (CI) or full form. */
export function chaosSuite(full: boolean): void {
  const form = full ? FULL : SHORT;
  const services = servicesOf(form.pipes);
  const faults = faultsFor(services);
  let world: ChaosWorld | undefined;
  let ledger: Ledger | undefined;
  const w = () => {
    if (!world || !ledger) throw new Error("the chaos world did not start");
    return { world, ledger };
  };
  let runLedger: RunLedger | undefined;
  before(async () => {
    world = await startChaosWorld(form.watchdog, form.pipes);
    ledger = startLedger(world.scn.admin, world.scn.namespace);
    runLedger = startRunLedger(world.scn.admin, world.scn.namespace);
  });
  after(async () => {
    ledger?.stop();
    runLedger?.stop();
    await world?.dispose();
  });

  test(`${form.items} requests and runs under ${faults.length} faults: each ends once, none lost, no crash`, {
    timeout: form.plannedMs + form.collectMs + 600_000,
  }, async () => {
    const { world, ledger } = w();
    if (!runLedger) throw new Error("the run ledger did not start");
    const ledgers: Ledgers = { requests: ledger, runs: runLedger };
    await warmUp(world, ledgers);
    await sleep(5_000);
    const rssBefore = rssOfAll(world);

    // the load: each fault gets an equal share, paced over the fault and the quiet gap after it
    // (what is left when they are over goes at once), so every fault meets requests in flight
    const planned: PlannedItem[] = Array.from({ length: form.items }, (_, i) => planItem(world, "load", i));
    const requests = planned.filter((p): p is PlannedRequest => !isRun(p));
    const runs = planned.filter(isRun);
    const windowOf = new Map<string, string>();
    let window = "before-faults";
    const faultNotes: Record<string, string> = {};
    const faultProblems: string[] = [];
    const background: Promise<void>[] = [];
    const faultMs: Record<string, number> = {};
    const started = Date.now();
    const creates: Promise<void>[] = [];
    const createErrors: string[] = [];
    let next = 0;
    for (const [k, fault] of faults.entries()) {
      const share = planned.slice(next, Math.round(((k + 1) * form.items) / faults.length));
      next += share.length;
      const spanMs = fault.expectedMs(form.timings) + form.gapMs;
      const t0 = Date.now();
      let over = false;
      window = fault.name;
      const feeding = (async () => {
        for (const [i, p] of share.entries()) {
          if (!over) await sleep(Math.max(0, t0 + (i * spanMs) / share.length - Date.now()));
          windowOf.set(keyOf(p), window);
          creates.push(
            launch(world, p, Date.now() + 120_000).catch((err: unknown) => {
              createErrors.push(`${keyOf(p)}: ${String(err)}`);
            }),
          );
        }
      })();
      await fault.run(world, form.timings, {
        note: (d) => {
          faultNotes[fault.name] = d;
        },
        problem: (d) => faultProblems.push(`${fault.name}: ${d}`),
        background: (work) => background.push(work),
      });
      faultMs[fault.name] = Date.now() - t0;
      window = `after-${fault.name}`;
      await sleep(form.gapMs);
      over = true;
      await feeding;
    }
    await Promise.all(creates);
    const loadMs = Date.now() - started;
    assert.deepEqual(createErrors, [], "every request and run was created (and cancelled, if asked)");

    const names = requests.map((p) => p.name);
    const [pending] = await Promise.all([
      waitTerminal(ledgers, planned, form.collectMs),
      Promise.all(background),
    ]);
    // the runs' own requests end too (a run may end before its request: a timeout, a cancel)
    const childrenPending = await (async () => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const open = (await runRequests(world))
          .filter((rr) => !ledger.histories.get(rr.metadata.name ?? "")?.states.some(isTerminal))
          .map((rr) => rr.metadata.name ?? "");
        if (open.length === 0 || Date.now() > deadline) return open;
        await sleep(1_000);
      }
    })();
    // let a stray second write surface before judging
    await sleep(5_000);
    const allEndedMs = Date.now() - started;

    // the apiserver's word on each request's final state
    const finals = new Map<string, ResolutionRequest>();
    for (const rr of (await world.scn.admin.list<ResolutionRequest>(resolutionRequests, world.scn.namespace))
      .items)
      finals.set(rr.metadata.name ?? "", rr);
    const problems: string[] = [];
    const outcomes: string[] = [];
    const perFault: Record<string, Record<string, number>> = {};
    const countIn = (win: string, outcome: string) => {
      perFault[win] ??= {};
      perFault[win][outcome] = (perFault[win][outcome] ?? 0) + 1;
    };
    /**
     * The request checks: on the apiserver, one terminal state (False with a reason), data written
     * once; resolved to `data` where the load knows what it must be.
     */
    const checkRequest = (name: string, data?: string): string => {
      const rr = finals.get(name);
      const h = ledger.histories.get(name);
      const c = rr?.status?.conditions?.find((x) => x.type === "Succeeded");
      const reason = rr?.status?.annotations?.["quarry.dev/reason"];
      const outcome =
        !c || c.status === "Unknown" ? "not-terminal" : c.status === "True" ? "Resolved" : `${reason}`;
      if (!rr) problems.push(`${name}: lost (not on the apiserver)`);
      else if (outcome === "not-terminal")
        problems.push(`${name}: not terminal: ${JSON.stringify(rr.status)}`);
      else if (c?.status === "False" && !reason) problems.push(`${name}: False without quarry.dev/reason`);
      else if (c?.status === "True" && data !== undefined && dataOf(rr) !== data)
        problems.push(`${name}: resolved to other data: ${JSON.stringify(dataOf(rr).slice(0, 200))}`);
      if (!h) {
        problems.push(`${name}: never seen by the watch`);
        return outcome;
      }
      const terminal = h.states.filter(isTerminal);
      if (terminal.length > 1)
        problems.push(`${name}: ${terminal.length} terminal states ${h.states.join(" > ")}`);
      if (h.dataWrites > 1) problems.push(`${name}: data written ${h.dataWrites} times`);
      if (c?.status === "True" && h.dataWrites !== 1)
        problems.push(`${name}: resolved without one data write`);
      return outcome;
    };
    for (const p of requests) {
      const outcome = checkRequest(p.name, p.data);
      const allowed = expectedRequestOutcomes(p.kind);
      const rr = finals.get(p.name);
      if (rr && outcome !== "not-terminal" && allowed && !allowed.includes(outcome))
        problems.push(`${p.name}: ended ${outcome}: ${succeeded(rr)?.message}`);
      outcomes.push(`${p.kind} ${outcome}`);
      countIn(windowOf.get(p.name) ?? "?", outcome);
    }
    const writesAfterTerminal = [...ledger.histories.entries()]
      .filter(([n, h]) => names.includes(n) && h.writesAfterTerminal > 0)
      .map(([n, h]) => `${n}:${h.writesAfterTerminal}`);

    // the runs: the apiserver's word on each, then what the run ledger saw
    const finalRuns = new Map<string, AnyRun>();
    for (const flavour of FLAVOURS)
      for (const run of (await world.scn.admin.list<AnyRun>(resourceOf(flavour), world.scn.namespace)).items)
        finalRuns.set(runKey(flavour, run.metadata.name ?? ""), run);
    const runOutcomes: string[] = [];
    const perFaultRuns: Record<string, Record<string, number>> = {};
    const runWritesAfterTerminal: string[] = [];
    let maxRunStatusBytes = 0;
    for (const p of runs) {
      const key = keyOf(p);
      const run = finalRuns.get(key);
      const h = runLedger.histories.get(key);
      const c = run ? runSucceeded(run) : undefined;
      const outcome = !c || c.status === "Unknown" ? "not-terminal" : `${c.status}/${c.reason ?? ""}`;
      runOutcomes.push(`${p.kind} ${outcome}`);
      const win = windowOf.get(key) ?? "?";
      perFaultRuns[win] ??= {};
      perFaultRuns[win][outcome] = (perFaultRuns[win][outcome] ?? 0) + 1;
      if (!run) problems.push(`${key}: lost (not on the apiserver)`);
      else if (outcome === "not-terminal")
        problems.push(`${key}: not terminal: ${JSON.stringify(run.status)}`);
      else if (!expectedRunOutcomes(p.kind, p.flavour).includes(outcome))
        problems.push(`${key}: ended ${outcome}: ${c?.message}`);
      if (!h) {
        problems.push(`${key}: never seen by the watch`);
        continue;
      }
      for (const x of runHistoryProblems(h, RUN_STATUS_LIMIT)) problems.push(`${key}: ${x}`);
      if (h.writesAfterTerminal > 0)
        runWritesAfterTerminal.push(
          `${key}: ${h.writesAfterTerminal} (${h.changedAfterTerminal.join(", ")}) ${h.states.join(" > ")}`,
        );
      maxRunStatusBytes = Math.max(maxRunStatusBytes, h.maxStatusBytes);
    }
    // the runs' own requests: each ends once like any other, and belongs to a planned git-ref run
    const children = (await runRequests(world)).filter((rr) =>
      (rr.metadata.labels?.[LABEL_RUN] ?? "").startsWith("load-"),
    );
    const childOutcomes = children.map((rr) => checkRequest(rr.metadata.name ?? ""));
    const gitRefRuns = runs.filter((p) => p.kind === "wait-git-ref").length;
    if (children.length < gitRefRuns)
      problems.push(`${children.length} run requests for ${gitRefRuns} git-ref runs`);

    // RSS after the load, once it has been idle for a while
    await sleep(form.settleMs);
    const rssAfter = rssOfAll(world);
    const rss = services.map((s) => {
      const b = rssBefore[s] ?? 0;
      const a = rssAfter[s] ?? 0;
      return { service: s, beforeMiB: b, afterMiB: a, change: b ? Math.round(((a - b) / b) * 1000) / 10 : 0 };
    });
    const stalled = Object.fromEntries(
      services.map((s) => [
        s,
        (
          world.current
            .get(s)
            ?.logs()
            .match(/watch stalled, restarting/g) ?? []
        ).length,
      ]),
    );

    const report = {
      mode: form.mode,
      services: e2eMode(),
      requests: requests.length,
      runs: runs.length,
      runRequests: children.length,
      loadSeconds: Math.round(loadMs / 1000),
      allEndedSeconds: Math.round(allEndedMs / 1000),
      faultSeconds: Object.fromEntries(
        Object.entries(faultMs).map(([k, v]) => [k, Math.round(v / 100) / 10]),
      ),
      faultNotes,
      perKindOutcome: count(outcomes),
      perWindow: perFault,
      perOutcome: count(outcomes.map((o) => o.split(" ")[1]!)),
      writesAfterTerminal: writesAfterTerminal.length,
      runsPerKindOutcome: count(runOutcomes),
      runsPerWindow: perFaultRuns,
      runsPerOutcome: count(runOutcomes.map((o) => o.split(" ")[1]!)),
      runRequestsPerOutcome: count(childOutcomes),
      childrenNotTerminal: childrenPending.length,
      runWritesAfterTerminal: runWritesAfterTerminal.length,
      maxRunStatusBytes,
      runLedgerReconnects: runLedger.restarts,
      ledgerReconnects: ledger.restarts,
      watchStalledLogLines: stalled,
      rss,
      crashes: world.crashes.length,
      faultProblems,
    };
    console.log(`chaos report: ${JSON.stringify(report)}`);
    if (process.env.QUARRY_CHAOS_REPORT)
      writeFileSync(
        process.env.QUARRY_CHAOS_REPORT,
        `${JSON.stringify(
          { ...report, problems, writesAfterTerminal, runWritesAfterTerminal, crashes: world.crashes },
          null,
          2,
        )}\n`,
      );

    assert.deepEqual(faultProblems, [], "each fault's own check");
    assert.deepEqual(pending.slice(0, 20), [], `${pending.length} requests and runs not terminal`);
    assert.deepEqual(childrenPending.slice(0, 20), [], `${childrenPending.length} run requests not terminal`);
    assert.deepEqual(problems.slice(0, 30), [], `${problems.length} problems`);
    assert.deepEqual(world.crashes, [], "no service exited on its own");
    for (const s of services) {
      const svc = world.current.get(s);
      assert.equal((await svc?.ops("/healthz"))?.status, 200, `${s} /healthz`);
    }
    const grown = rss.filter((r) => r.afterMiB > r.beforeMiB * (1 + RSS_TOLERANCE));
    assert.deepEqual(grown, [], `RSS more than ${RSS_TOLERANCE * 100}% above its value before the load`);
  });
}
