// Driving ResolutionRequests for benchmarks: clients that create them (and
// whatever else a benchmark's client does per request), a watch that
// timestamps what each request goes through, and per-request timelines.
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { type ResolutionRequest, resolutionRequests } from "@quarry/api";
import { succeeded } from "@quarry/harness/scenario";
import {
  errorMessage,
  isApiError,
  type KubeClient,
  type KubeObject,
  type ResourceType,
  RestKubeClient,
} from "@quarry/kube";
import { log, sleep } from "./run.ts";

/** One request's timeline (performance.now(), ms). */
export interface Sample {
  name: string;
  /** just before the create was sent */
  t0: number;
  /** the create returned */
  created?: number;
  /** the client's own status.data write returned (benchmarks whose client plays the resolver) */
  patched?: number;
  /** first seen Succeeded=Unknown on the watch */
  inProgress?: number;
  /** first seen with status.data on the watch */
  dataSeen?: number;
  /** first seen Succeeded=True on the watch */
  done?: number;
  /** Succeeded=False, or a client error */
  failed?: string;
}

/** What every driven object's timeline has: its name, when its create was about to be sent, how it ended. */
export interface TimedSample {
  name: string;
  t0: number;
  done?: number;
  failed?: string;
}

/**
 * What a tracker of timelines shares, whatever it drives: marking a sample
 * failed, and waiting until a batch of samples is done or failed.
 */
export class Settling<S extends TimedSample> {
  private readonly waiters = new Set<() => void>();
  private readonly tracked = new Map<string, S>();

  /** Follows `s`: the watch's events for an object of its name stamp it. */
  track(s: S): void {
    this.tracked.set(s.name, s);
  }

  /** The sample followed under `name`, if any. */
  protected sampleOf(name: string | undefined): S | undefined {
    return this.tracked.get(name ?? "");
  }

  fail(s: S, why: string): void {
    s.failed ??= why;
    this.notify();
  }

  /** Resolves once every sample is done or failed, or when `signal` aborts. */
  settled(batch: readonly S[], signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (signal.aborted || batch.every((s) => s.done !== undefined || s.failed !== undefined)) {
          this.waiters.delete(check);
          signal.removeEventListener("abort", check);
          resolve();
        }
      };
      this.waiters.add(check);
      signal.addEventListener("abort", check);
      check();
    });
  }

  /** Wakes the waiters to look at their batches again (a sample settled). */
  protected notify(): void {
    for (const w of [...this.waiters]) w();
  }
}

export class Tracker extends Settling<Sample> {
  observe(rr: ResolutionRequest, at: number): void {
    const s = this.sampleOf(rr.metadata.name);
    if (!s) return;
    if (rr.status?.data && s.dataSeen === undefined) s.dataSeen = at;
    const cond = succeeded(rr);
    if (!cond) return;
    if (cond.status === "Unknown" && s.inProgress === undefined) s.inProgress = at;
    else if (cond.status === "True" && s.done === undefined) {
      s.done = at;
      this.notify();
    } else if (cond.status === "False" && s.failed === undefined && s.done === undefined) {
      s.failed = `${cond.reason ?? "False"}: ${cond.message ?? ""}`;
      this.notify();
    }
  }
}

/**
 * Watches a namespace's objects of one resource until `signal` aborts,
 * resuming after errors from the last resourceVersion seen, and hands each
 * event but bookmarks to `observe` with when it arrived (performance.now()
 * and Date.now() ms). `onListed` is called once the starting resourceVersion
 * is known; `what` names the watch in the restart log line.
 */
export async function watchObjects<T extends KubeObject>(
  client: KubeClient,
  rt: ResourceType,
  namespace: string,
  observe: (type: string, obj: T, at: number, wall: number) => void,
  signal: AbortSignal,
  stats: { restarts: number },
  opts: { onListed?: () => void; what?: string } = {},
): Promise<void> {
  // start from a listed resourceVersion so nothing created afterwards is missed
  let rv = "";
  while (!rv && !signal.aborted) {
    try {
      rv = (await client.list(rt, namespace, { limit: 1 })).metadata.resourceVersion ?? "";
    } catch (err) {
      log(`list failed (${errorMessage(err)}); retrying`);
      await sleep(200);
    }
  }
  opts.onListed?.();
  while (!signal.aborted) {
    try {
      const events = client.watch<T>(
        rt,
        namespace,
        { resourceVersion: rv || undefined, allowWatchBookmarks: true, timeoutSeconds: 600 },
        signal,
      );
      for await (const ev of events) {
        const at = performance.now();
        const wall = Date.now();
        if (ev.type === "ERROR") {
          const status = ev.object as unknown as { code?: number; message?: string };
          if (status.code === 410) rv = ""; // too old: rewatch from now (synthetic ADDED for all)
          throw new Error(`watch ERROR event: ${status.message ?? JSON.stringify(ev.object)}`);
        }
        rv = ev.object.metadata.resourceVersion ?? rv;
        if (ev.type !== "BOOKMARK") observe(ev.type, ev.object, at, wall);
      }
    } catch (err) {
      if (signal.aborted) return;
      if (isApiError(err, 410)) rv = "";
      stats.restarts++;
      log(`${opts.what ?? "watch"} restarted after: ${errorMessage(err)}`);
      await sleep(200);
    }
  }
}

/** A Tracker fed by a watch on `namespace`'s ResolutionRequests (`ready` once it has listed; `restarts` counts its restarts). */
export function trackRequests(signal: AbortSignal, client: KubeClient, namespace: string) {
  const tracker = new Tracker();
  const stats = { restarts: 0 };
  const watch = startWatch(signal, (stop, onListed) =>
    watchObjects<ResolutionRequest>(
      client,
      resolutionRequests,
      namespace,
      (_type, rr, at) => tracker.observe(rr, at),
      stop,
      stats,
      { onListed },
    ),
  );
  return { tracker, stats, ...watch };
}

/** `n` clients to `kubeconfig`'s API server, each its own connection. */
export const connections = (kubeconfig: string, n: number): RestKubeClient[] =>
  Array.from({ length: n }, () => RestKubeClient.fromEnvironment(kubeconfig));

/**
 * Starts a watch loop (`watch` gets the signal that stops it and the callback
 * to call once it has its starting point), stopped when `signal` aborts or by
 * `stop`. Await `ready` (the starting point is known, or the loop ended) before
 * creating what it should see; await `stop` when done with it.
 */
export function startWatch(
  signal: AbortSignal,
  watch: (stop: AbortSignal, onListed: () => void) => Promise<void>,
): { ready: Promise<void>; stop: () => Promise<void> } {
  const watchStop = new AbortController();
  const stopWatch = () => watchStop.abort();
  signal.addEventListener("abort", stopWatch);
  let listed = () => {};
  const watching = new Promise<void>((resolve) => {
    listed = resolve;
  });
  const watchLoop = watch(watchStop.signal, listed);
  return {
    ready: Promise.race([watching, watchLoop]),
    stop: async () => {
      signal.removeEventListener("abort", stopWatch);
      watchStop.abort();
      await watchLoop.catch(() => {});
    },
  };
}

/** Retries transient API errors (network, 429, 5xx) with a short backoff, up to 5 attempts. */
export async function withRetry<T>(
  what: () => Promise<T>,
  stats: { retries: number },
  signal: AbortSignal,
  acceptOnRetry?: (err: unknown) => boolean,
): Promise<T | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await what();
    } catch (err) {
      if (attempt > 1 && acceptOnRetry?.(err)) return undefined;
      const transient = !isApiError(err) || err.status === 429 || err.status >= 500;
      if (!transient || attempt >= 5 || signal.aborted) throw err;
      stats.retries++;
      await sleep(50 * 2 ** attempt);
    }
  }
}

/** Creates a request (retrying; a 409 on a retry means an earlier attempt did create it). */
export async function createWithRetry(
  client: KubeClient,
  rr: ResolutionRequest,
  stats: { retries: number },
  signal: AbortSignal,
): Promise<void> {
  await withRetry(
    () => client.create(resolutionRequests, rr),
    stats,
    signal,
    (err) => isApiError(err, 409),
  );
}

export interface BatchResult<S extends TimedSample = Sample> {
  samples: S[];
  /** first create sent */
  start: number;
  /** last Succeeded=True seen (now, if none) */
  end: number;
  /** open loop at a rate: when the last request was sent, the most in flight at once, the latest send */
  paced?: { sentSeconds: number; maxInFlight: number; maxLagMs: number; heldBackSeconds: number };
}

/** Open loop at `rate` requests/s, holding the next one back while `maxInFlight` are in flight. */
export interface Pacing {
  rate: number;
  maxInFlight: number;
}

/**
 * `n` requests named `<prefix>-00000`…, sent by `clients.length` concurrent
 * clients: `send` creates request `i` (and does whatever else the client does
 * for it), recording `created`/`patched` on the sample. Open loop by default:
 * a client sends its next request as soon as `send` returns, so a burst
 * outruns the controllers and queues in them; with `closedLoop` it first waits
 * for the request to finish; with `pacing` request i leaves at start + i/rate,
 * each on the next client in turn. `onSent` hears each request's 1-based
 * number as it leaves. Resolves once every request is done or failed, or
 * when `signal` aborts.
 */
export async function runBatch<S extends TimedSample = Sample>(opts: {
  clients: readonly KubeClient[];
  prefix: string;
  n: number;
  tracker: Settling<S>;
  signal: AbortSignal;
  /** a new sample's timeline (default: its name and t0) */
  sample?: (name: string) => S;
  send: (client: KubeClient, name: string, i: number, s: S) => Promise<void>;
  /** each client waits until its request is done (or failed) before sending the next (closed loop) */
  closedLoop?: boolean;
  pacing?: Pacing | undefined;
  onSent?: ((sent: number) => void) | undefined;
}): Promise<BatchResult<S>> {
  const { clients, prefix, n, tracker, signal, send } = opts;
  const samples: S[] = [];
  const start = performance.now();
  const one = async (client: KubeClient, i: number) => {
    const name = `${prefix}-${String(i).padStart(5, "0")}`;
    const s = opts.sample?.(name) ?? ({ name, t0: performance.now() } as S);
    tracker.track(s);
    samples.push(s);
    try {
      await send(client, name, i, s);
    } catch (err) {
      tracker.fail(s, `client: ${errorMessage(err)}`);
    }
    if (opts.closedLoop) await tracker.settled([s], signal);
  };
  let paced: BatchResult<S>["paced"];
  if (opts.pacing)
    paced = await paceBatch(
      opts.pacing,
      n,
      signal,
      start,
      (i) => one(clients[i % clients.length]!, i),
      opts.onSent,
    );
  else {
    let next = 0;
    const worker = async (client: KubeClient) => {
      for (;;) {
        if (signal.aborted) return;
        const i = next++;
        if (i >= n) return;
        opts.onSent?.(i + 1);
        await one(client, i);
      }
    };
    await Promise.all(clients.map(worker));
  }
  await tracker.settled(samples, signal);
  const ends = samples.flatMap((s) => (s.done !== undefined ? [s.done] : []));
  return { samples, start, end: ends.length ? Math.max(...ends) : performance.now(), paced };
}

/** Sends request i at start + i/rate whatever the earlier ones are doing; resolves when all have returned. */
async function paceBatch(
  { rate, maxInFlight }: Pacing,
  n: number,
  signal: AbortSignal,
  start: number,
  one: (i: number) => Promise<void>,
  onSent: ((sent: number) => void) | undefined,
): Promise<NonNullable<BatchResult["paced"]>> {
  const inFlight = new Set<Promise<void>>();
  let most = 0;
  let maxLagMs = 0;
  let heldBackMs = 0;
  for (let i = 0; i < n && !signal.aborted; i++) {
    if (inFlight.size >= maxInFlight) {
      const held = performance.now();
      while (inFlight.size >= maxInFlight && !signal.aborted) await Promise.race(inFlight);
      heldBackMs += performance.now() - held;
    }
    // after a hold the schedule restarts from now: the run is late, not a burst to catch up
    const due = start + heldBackMs + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    maxLagMs = Math.max(maxLagMs, performance.now() - due);
    const p = one(i).finally(() => inFlight.delete(p));
    inFlight.add(p);
    most = Math.max(most, inFlight.size);
    onSent?.(i + 1);
  }
  const r1 = (x: number) => Math.round(x * 10) / 10;
  const paced = {
    sentSeconds: r1((performance.now() - start) / 1000),
    maxInFlight: most,
    maxLagMs: r1(maxLagMs),
    heldBackSeconds: r1(heldBackMs / 1000),
  };
  await Promise.all(inFlight);
  return paced;
}

/** The measured timelines as CSV, in ms since the batch's first create. */
export function samplesCsv(batch: BatchResult, phase = ""): string {
  const rel = (t: number | undefined) => (t === undefined ? "" : (t - batch.start).toFixed(1));
  const rows = batch.samples.map((s) =>
    [
      phase,
      s.name,
      rel(s.t0),
      rel(s.created),
      rel(s.patched),
      rel(s.inProgress),
      rel(s.dataSeen),
      rel(s.done),
      JSON.stringify(s.failed ?? ""),
    ].join(","),
  );
  return `${rows.join("\n")}\n`;
}
export const SAMPLES_CSV_HEADER =
  "phase,name,t0,created,patched,inProgressSeen,dataSeen,succeededSeen,failed\n";

/** Counts a service's log lines by message (pino JSON lines). */
export function logCounts(file: string): Record<string, number> {
  const counts: Record<string, number> = {};
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return counts;
  }
  for (const line of text.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const rec = JSON.parse(line) as { msg?: unknown };
      if (typeof rec.msg === "string") counts[rec.msg] = (counts[rec.msg] ?? 0) + 1;
    } catch {}
  }
  return counts;
}

/** Deletes requests (16 at a time; gone already is fine), e.g. a phase's before the next so informers start empty. */
export async function deleteRequests(
  admin: KubeClient,
  namespace: string,
  names: readonly string[],
  signal: AbortSignal,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < names.length && !signal.aborted) {
      const name = names[next++]!;
      await admin.delete(resolutionRequests, namespace, name).catch((err: unknown) => {
        if (!isApiError(err, 404)) throw err;
      });
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}
