// A rolling update during a burst loses no request. Three replicas of the
// cluster resolver share 6 bucket Leases; while requests keep coming, they are
// replaced one at a time the way a Deployment's RollingUpdate (maxSurge 1,
// maxUnavailable 0) does it: start a new replica, wait until it is Ready on
// /readyz, SIGTERM one old replica (with a spike of requests just created, so
// it has work queued and in flight), start the next new one without waiting
// for the old one to exit (a terminating pod no longer counts). Every request
// reaches Succeeded=True once, with its own Task's definition written once;
// each was resolved by exactly one replica, exactly once (counted from every
// replica's "resolution step" log lines, which outlive the process, and checked
// against the metrics of the replicas still running); every old replica exits
// 0 after its SIGTERM; the new replicas hold every bucket.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type ResolutionRequest, resolutionRequests } from "@quarry/api";
import { applyObject } from "@quarry/devcluster/apply";
import { waitUntil } from "@quarry/devcluster/wait";
import { bucketHolders, heldBuckets, metricSum, type Replica, startReplica } from "@quarry/harness/replicas";
import { createRequest, dataOf, newRequest, taskManifest, useScenario } from "@quarry/harness/scenario";
import { firstSeen, recordTransitions, terminalStates } from "@quarry/harness/transitions";
import { type KubeObject, type Lease, leases, type ResourceType } from "@quarry/kube";
import yaml from "js-yaml";

const SERVICE = "cluster-resolver";
const BUCKETS = 6;
// Shorter than the defaults (15s/10s/2s) so a bucket left unheld costs seconds, not 15; a renew
// deadline long enough that a busy machine does not make replicas drop buckets they are working on.
const ENV = {
  QUARRY_BUCKETS: String(BUCKETS),
  QUARRY_LEASE_DURATION: "8s",
  QUARRY_LEASE_RENEW_DEADLINE: "6s",
  QUARRY_LEASE_RETRY_PERIOD: "1s",
  // the per-step log line the count below reads
  LOG_LEVEL: "debug",
};
const TASKS = 12;
/** Requests created per second, steadily, for as long as the rollout takes. */
const STREAM_PER_SECOND = 10;
/** Requests created at once just before each SIGTERM. */
const SPIKE = 60;
const cluster = { "resolution.tekton.dev/type": "cluster" };
const taskName = (i: number) => `task-${String(i % TASKS).padStart(2, "0")}`;

const scenario = useScenario("ha-rolling-update", {
  start: ["lifecycle-controller"],
  setup: async (scn) => {
    for (let i = 0; i < TASKS; i++) {
      const name = taskName(i);
      const task = taskManifest(scn.namespace, name);
      await applyObject(scn.admin, {
        ...task,
        spec: { steps: [{ name: "s", image: "busybox", script: `echo ${name}` }] },
      });
    }
  },
});

/** Watches the namespace's objects of `rt` until stopped, resuming from the last resourceVersion after errors. */
function watchAll<T extends KubeObject>(
  scn: ReturnType<typeof scenario>,
  rt: ResourceType,
  labelSelector: string | undefined,
  onObject: (obj: T) => void,
): () => void {
  const abort = new AbortController();
  void (async () => {
    let resourceVersion: string | undefined;
    while (!abort.signal.aborted) {
      try {
        for await (const ev of scn.admin.watch<T>(
          rt,
          scn.namespace,
          { resourceVersion, labelSelector },
          abort.signal,
        )) {
          resourceVersion = ev.object.metadata?.resourceVersion ?? resourceVersion;
          if (ev.type === "ADDED" || ev.type === "MODIFIED") onObject(ev.object);
        }
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  })();
  return () => abort.abort();
}

/** Every `status.data` value a watch saw per request, in order (a change would be a second write). */
function recordData(scn: ReturnType<typeof scenario>): { data: Map<string, string[]>; stop(): void } {
  const data = new Map<string, string[]>();
  const stop = watchAll<ResolutionRequest>(scn, resolutionRequests, undefined, (rr) => {
    const name = rr.metadata.name;
    const d = rr.status?.data;
    if (!name || !d) return;
    const seen = data.get(name) ?? [];
    if (seen[seen.length - 1] !== d) seen.push(d);
    data.set(name, seen);
  });
  return { data, stop };
}

/**
 * How long each bucket Lease went without a holder, longest first: a released bucket nobody
 * takes waits for its Lease to expire, and its requests with it (what the latency shows).
 */
function recordUnheld(scn: ReturnType<typeof scenario>): { longest(): [string, number][]; stop(): void } {
  const since = new Map<string, number>();
  const longest = new Map<string, number>();
  const stop = watchAll<Lease>(scn, leases, "quarry.dev/lease=bucket", (l) => {
    const name = l.metadata.name ?? "";
    const held = Boolean(l.spec?.holderIdentity);
    const from = since.get(name);
    if (held && from !== undefined) {
      longest.set(name, Math.max(longest.get(name) ?? 0, Math.round(performance.now() - from)));
      since.delete(name);
    } else if (!held && from === undefined) since.set(name, performance.now());
  });
  return { longest: () => [...longest].sort((a, b) => b[1] - a[1]), stop };
}

/** Succeeded resolution steps per request key, from a replica's log file (also after it exited). */
function stepsFromLog(r: Replica): { succeeded: Map<string, number>; other: Record<string, number> } {
  const succeeded = new Map<string, number>();
  const other: Record<string, number> = {};
  for (const line of r.svc.logs().split("\n")) {
    if (!line.startsWith("{")) continue;
    let rec: { msg?: string; key?: string; outcome?: string };
    try {
      rec = JSON.parse(line);
    } catch {
      continue;
    }
    if (rec.msg !== "resolution step" || !rec.key) continue;
    if (rec.outcome === "succeeded") succeeded.set(rec.key, (succeeded.get(rec.key) ?? 0) + 1);
    else other[rec.outcome ?? "?"] = (other[rec.outcome ?? "?"] ?? 0) + 1;
  }
  return { succeeded, other };
}

test("a rolling update of three replicas during a burst: every request resolved once, old replicas exit 0", async () => {
  const scn = scenario();
  const t0 = performance.now();
  const at = () => `${((performance.now() - t0) / 1000).toFixed(1)}s`;
  const transitions = recordTransitions(scn.admin, scn.namespace);
  const dataSeen = recordData(scn);
  const unheld = recordUnheld(scn);

  // ---- three replicas, the buckets spread over them ----
  await scn.identity(SERVICE); // made once, before the replicas start together
  const old = await Promise.all(["r1", "r2", "r3"].map((n) => startReplica(scn, SERVICE, n, ENV)));
  await waitUntil(
    "the buckets to spread over r1, r2 and r3",
    async () => {
      const held = await Promise.all(old.map(heldBuckets));
      return held.every((h) => h.length === BUCKETS / old.length) || undefined;
    },
    { timeoutMs: 20_000, intervalMs: 200 },
  );

  // ---- the burst: a steady stream for the whole rollout, plus a spike before each SIGTERM ----
  const names: string[] = [];
  const createdAt = new Map<string, number>();
  const creates: Promise<unknown>[] = [];
  const create = () => {
    const i = names.length;
    const name = `req-${String(i).padStart(4, "0")}`;
    names.push(name);
    createdAt.set(name, performance.now());
    const p = createRequest(
      scn.admin,
      newRequest(scn.namespace, name, cluster, { kind: "task", name: taskName(i) }),
    );
    creates.push(p);
    p.catch(() => {}); // awaited below, with the others
    return p;
  };
  let streaming = true;
  const stream = (async () => {
    while (streaming) {
      create();
      await new Promise((r) => setTimeout(r, 1000 / STREAM_PER_SECOND));
    }
  })();

  // ---- the rollout: new replica Ready, then SIGTERM an old one, next ----
  const fresh: Replica[] = [];
  const exits: Promise<{ name: string; code: number | null; signal: string | null; ms: number }>[] = [];
  await new Promise((r) => setTimeout(r, 500));
  for (const [k, r] of old.entries()) {
    const n = await startReplica(scn, SERVICE, `r${4 + k}`, ENV); // resolves once /readyz is 200
    fresh.push(n);
    console.log(`[ha-rolling-update] ${at()} ${n.name} ready; SIGTERM ${r.name} (${names.length} created)`);
    await Promise.all(Array.from({ length: SPIKE }, create));
    const termed = performance.now();
    r.svc.kill("SIGTERM");
    exits.push(
      r.svc.exited.then((e) => ({ name: r.name, ...e, ms: Math.round(performance.now() - termed) })),
    );
  }
  await new Promise((r) => setTimeout(r, 1_000));
  streaming = false;
  await stream;
  await Promise.all(creates);
  const exited = await Promise.all(exits);
  console.log(
    `[ha-rolling-update] ${at()} rollout done, ${names.length} requests; exits ${exited.map((e) => `${e.name} ${e.code} in ${e.ms} ms`).join(", ")}`,
  );
  for (const e of exited)
    assert.deepEqual({ code: e.code, signal: e.signal }, { code: 0, signal: null }, `${e.name} exits 0`);
  assert.ok(names.length >= 200, `a burst of a few hundred requests (${names.length})`);

  // ---- every request resolves, to its own Task ----
  const list = await waitUntil(
    `${names.length} requests to succeed`,
    async () => {
      const l = await scn.admin.list<ResolutionRequest>(resolutionRequests, scn.namespace);
      const done = l.items.filter((rr) =>
        rr.status?.conditions?.some((c) => c.type === "Succeeded" && c.status !== "Unknown"),
      );
      return done.length >= names.length ? l.items : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
  console.log(`[ha-rolling-update] ${at()} all finished`);
  const byName = new Map(list.map((rr) => [rr.metadata.name ?? "", rr]));
  for (const [i, name] of names.entries()) {
    const rr = byName.get(name);
    const cond = rr?.status?.conditions?.find((c) => c.type === "Succeeded");
    assert.equal(cond?.status, "True", `${name}: ${JSON.stringify(cond)}`);
    const doc = yaml.load(dataOf(rr!)) as { kind: string; metadata: { name: string }; spec: unknown };
    assert.equal(doc.kind, "Task", name);
    assert.equal(doc.metadata.name, taskName(i), name);
    assert.match(JSON.stringify(doc.spec), new RegExp(`echo ${taskName(i)}`), name);
  }

  // ---- once: one terminal condition, one data write, one resolution by one replica ----
  await new Promise((r) => setTimeout(r, 500)); // the watches catch up
  transitions.stop();
  dataSeen.stop();
  const latencies = names
    .map((n) => (firstSeen(transitions, n, "True") ?? Number.NaN) - createdAt.get(n)!)
    .sort((a, b) => a - b);
  const pct = (q: number) =>
    Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!);
  console.log(
    `[ha-rolling-update] create → True seen: p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms, max ${pct(1)} ms`,
  );
  for (const name of names) {
    const seq = transitions.transitions.get(name) ?? [];
    assert.deepEqual(terminalStates(seq).length, 1, `${name}: one terminal state (${seq.join(" → ")})`);
    assert.equal(dataSeen.data.get(name)?.length, 1, `${name}: status.data written once`);
  }
  const replicas = [...old, ...fresh];
  const steps = replicas.map(stepsFromLog);
  const resolvedBy = new Map<string, string[]>();
  for (const [k, r] of replicas.entries()) {
    for (const [key, n] of steps[k]!.succeeded) {
      for (let j = 0; j < n; j++) resolvedBy.set(key, [...(resolvedBy.get(key) ?? []), r.name]);
    }
  }
  const twice = names.filter((n) => (resolvedBy.get(`${scn.namespace}/${n}`)?.length ?? 0) > 1);
  const never = names.filter((n) => !resolvedBy.has(`${scn.namespace}/${n}`));
  const share = replicas.map(
    (r, k) => `${r.name} ${names.filter((n) => steps[k]!.succeeded.has(`${scn.namespace}/${n}`)).length}`,
  );
  const other = replicas.map((r, k) => `${r.name} ${JSON.stringify(steps[k]!.other)}`);
  console.log(`[ha-rolling-update] resolved by: ${share.join(", ")}; other steps: ${other.join(", ")}`);
  // A replica that misses its renew deadline drops its buckets with reconciles still in flight and
  // may take them back (or a peer may) before those end: the key is then resolved again (its write
  // is refused by the lock). Say so when it happened, for a run on a starved machine.
  const flapped = replicas.flatMap((r) =>
    r.svc.logs().includes("not renewed within the renew deadline") ? [r.name] : [],
  );
  assert.deepEqual(
    twice.map((n) => `${n}: ${resolvedBy.get(`${scn.namespace}/${n}`)?.join(", ")}`),
    [],
    `no request resolved twice${flapped.length ? ` (buckets lost at the renew deadline by ${flapped.join(", ")})` : ""}`,
  );
  assert.deepEqual(never, [], "every request resolved by a replica");
  // the log is the metric's twin: the replicas still running say the same in /metrics
  for (const [k, r] of fresh.entries()) {
    const metric = await metricSum(r, "quarry_resolution_duration_seconds_count", {
      type: "cluster",
      outcome: "succeeded",
    });
    const logged = [...steps[old.length + k]!.succeeded.values()].reduce((a, b) => a + b, 0);
    assert.equal(metric, logged, `${r.name}: log lines = metric`);
  }
  // the old replicas drained and said so; the new ones hold every bucket
  for (const r of old) assert.match(r.svc.logs(), /"msg":"shutdown complete"/, `${r.name} shut down cleanly`);
  const live = new Set(fresh.map((r) => r.name));
  await waitUntil(
    "every bucket held by a new replica",
    async () => {
      const holders = await bucketHolders(scn.admin, scn.namespace);
      return (holders.size === BUCKETS && [...holders.values()].every((h) => live.has(h))) || undefined;
    },
    { timeoutMs: 20_000, intervalMs: 200 },
  );
  unheld.stop();
  const gaps = unheld.longest().slice(0, 3);
  console.log(
    `[ha-rolling-update] ${at()} done; buckets without a holder, longest: ${gaps.map(([b, ms]) => `${b} ${ms} ms`).join(", ") || "none"}`,
  );
});
