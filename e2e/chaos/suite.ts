// The chaos run: a mixed load created at a steady pace while the faults run one
// after another (faults.ts); then every request must end in exactly one
// terminal Succeeded condition (True, or False with a quarry.dev/reason), none
// lost, none resolved twice (ledger.ts), no service crashed, and each service's
// RSS is compared with its value before the load. Prints (and, with
// QUARRY_CHAOS_REPORT=<file>, writes) the counts per fault and per outcome and
// the RSS figures that docs/testing.md records.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { type ResolutionRequest, resolutionRequests } from "@quarry/api";
import { FAULTS, type FaultTimings } from "./faults.ts";
import { isTerminal, type Ledger, startLedger } from "./ledger.ts";
import { createWithRetry, KINDS, type PlannedRequest, planRequest } from "./load.ts";
import { rssMiB } from "./rss.ts";
import { type ChaosWorld, SERVICES, type ServiceName, startChaosWorld } from "./world.ts";

interface ChaosForm {
  mode: "short" | "full";
  requests: number;
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
}

const SHORT: ChaosForm = {
  mode: "short",
  requests: 125,
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
  plannedMs: 85_000,
  collectMs: 180_000,
  settleMs: 15_000,
};

const FULL: ChaosForm = {
  mode: "full",
  requests: 1_000,
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
  plannedMs: 200_000,
  collectMs: 300_000,
  settleMs: 30_000,
};

/** RSS may end at most this much above its value before the load. */
const RSS_TOLERANCE = 0.2;

const count = (keys: string[]) => {
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = (out[k] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
};

function rssOfAll(world: ChaosWorld): Record<ServiceName, number | undefined> {
  return Object.fromEntries(SERVICES.map((s) => [s, rssMiB(world.current.get(s)?.pid ?? -1)])) as Record<
    ServiceName,
    number | undefined
  >;
}

async function waitTerminal(ledger: Ledger, names: string[], timeoutMs: number): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  let pending = names;
  while (Date.now() < deadline) {
    pending = pending.filter((n) => !ledger.histories.get(n)?.states.some(isTerminal));
    if (pending.length === 0) break;
    await sleep(1_000);
  }
  return pending;
}

/** A few requests of every kind, ended, so each service has loaded its code paths before RSS is read. */
async function warmUp(world: ChaosWorld, ledger: Ledger): Promise<void> {
  const warm = Array.from({ length: KINDS.length * 2 }, (_, i) => planRequest(world, "warm", i));
  await Promise.all(warm.map((p) => createWithRetry(world, p.request, Date.now() + 60_000)));
  const pending = await waitTerminal(
    ledger,
    warm.map((p) => p.name),
    120_000,
  );
  assert.deepEqual(pending, [], "the warm-up requests end");
}

/** Registers the chaos run in its short (CI) or full form. */
export function chaosSuite(full: boolean): void {
  const form = full ? FULL : SHORT;
  let world: ChaosWorld | undefined;
  let ledger: Ledger | undefined;
  const w = () => {
    if (!world || !ledger) throw new Error("the chaos world did not start");
    return { world, ledger };
  };
  before(async () => {
    world = await startChaosWorld(form.watchdog);
    ledger = startLedger(world.scn.admin, world.scn.namespace);
  });
  after(async () => {
    ledger?.stop();
    await world?.dispose();
  });

  test(`${form.requests} requests under ${FAULTS.length} faults: each ends once, none lost, no crash`, {
    timeout: form.plannedMs + form.collectMs + 600_000,
  }, async () => {
    const { world, ledger } = w();
    await warmUp(world, ledger);
    await sleep(5_000);
    const rssBefore = rssOfAll(world);

    // the load: each fault gets an equal share, paced over the fault and the quiet gap after it
    // (what is left when they are over goes at once), so every fault meets requests in flight
    const planned: PlannedRequest[] = Array.from({ length: form.requests }, (_, i) =>
      planRequest(world, "load", i),
    );
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
    for (const [k, fault] of FAULTS.entries()) {
      const share = planned.slice(next, Math.round(((k + 1) * form.requests) / FAULTS.length));
      next += share.length;
      const spanMs = fault.expectedMs(form.timings) + form.gapMs;
      const t0 = Date.now();
      let over = false;
      window = fault.name;
      const feeding = (async () => {
        for (const [i, p] of share.entries()) {
          if (!over) await sleep(Math.max(0, t0 + (i * spanMs) / share.length - Date.now()));
          windowOf.set(p.name, window);
          creates.push(
            createWithRetry(world, p.request, Date.now() + 120_000).catch((err: unknown) => {
              createErrors.push(`${p.name}: ${String(err)}`);
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
    assert.deepEqual(createErrors, [], "every request was created");

    const names = planned.map((p) => p.name);
    const [pending] = await Promise.all([
      waitTerminal(ledger, names, form.collectMs),
      Promise.all(background),
    ]);
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
    for (const p of planned) {
      const rr = finals.get(p.name);
      const h = ledger.histories.get(p.name);
      const c = rr?.status?.conditions?.find((x) => x.type === "Succeeded");
      const reason = rr?.status?.annotations?.["quarry.dev/reason"];
      const outcome =
        !c || c.status === "Unknown" ? "not-terminal" : c.status === "True" ? "Resolved" : `${reason}`;
      outcomes.push(`${p.kind} ${outcome}`);
      const win = windowOf.get(p.name) ?? "?";
      perFault[win] ??= {};
      perFault[win][outcome] = (perFault[win][outcome] ?? 0) + 1;
      if (!rr) problems.push(`${p.name}: lost (not on the apiserver)`);
      else if (outcome === "not-terminal")
        problems.push(`${p.name}: not terminal: ${JSON.stringify(rr.status)}`);
      else if (c?.status === "False" && !reason) problems.push(`${p.name}: False without quarry.dev/reason`);
      if (!h) {
        problems.push(`${p.name}: never seen by the watch`);
        continue;
      }
      const terminal = h.states.filter(isTerminal);
      if (terminal.length > 1)
        problems.push(`${p.name}: ${terminal.length} terminal states ${h.states.join(" > ")}`);
      if (h.dataWrites > 1) problems.push(`${p.name}: data written ${h.dataWrites} times`);
      if (c?.status === "True" && h.dataWrites !== 1)
        problems.push(`${p.name}: resolved without one data write`);
    }
    const writesAfterTerminal = [...ledger.histories.entries()]
      .filter(([n, h]) => names.includes(n) && h.writesAfterTerminal > 0)
      .map(([n, h]) => `${n}:${h.writesAfterTerminal}`);

    // RSS after the load, once it has been idle for a while
    await sleep(form.settleMs);
    const rssAfter = rssOfAll(world);
    const rss = SERVICES.map((s) => {
      const b = rssBefore[s] ?? 0;
      const a = rssAfter[s] ?? 0;
      return { service: s, beforeMiB: b, afterMiB: a, change: b ? Math.round(((a - b) / b) * 1000) / 10 : 0 };
    });
    const stalled = Object.fromEntries(
      SERVICES.map((s) => [
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
      requests: form.requests,
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
        `${JSON.stringify({ ...report, problems, writesAfterTerminal, crashes: world.crashes }, null, 2)}\n`,
      );

    assert.deepEqual(faultProblems, [], "each fault's own check");
    assert.deepEqual(pending.slice(0, 20), [], `${pending.length} requests not terminal`);
    assert.deepEqual(problems.slice(0, 30), [], `${problems.length} problems`);
    assert.deepEqual(world.crashes, [], "no service exited on its own");
    for (const s of SERVICES) {
      const svc = world.current.get(s);
      assert.equal((await svc?.ops("/healthz"))?.status, 200, `${s} /healthz`);
    }
    const grown = rss.filter((r) => r.afterMiB > r.beforeMiB * (1 + RSS_TOLERANCE));
    assert.deepEqual(grown, [], `RSS more than ${RSS_TOLERANCE * 100}% above its value before the load`);
  });
}
