// Follows the demo's requests through the API (a watch per wait, as a client
// would) and narrates each change of resolver label, resolved data or
// Succeeded condition once, however many waits observe it.
import { performance } from "node:perf_hooks";
import {
  ANNOTATION_REASON,
  CONDITION_SUCCEEDED,
  getCondition,
  isDone,
  LABEL_RESOLVER_TYPE,
  type RefSource,
  type ResolutionRequest,
  resolutionRequests,
} from "@quarry/api";
import type { KubeClient } from "@quarry/kube";
import type { Narrator } from "./narrator.ts";

interface Seen {
  label: string | undefined;
  condition: string | undefined;
  hasData: boolean;
  createdAt: number;
}

export class Tracker {
  private readonly seen = new Map<string, Seen>();
  /** refSources already printed: a second request for the same object says so instead. */
  private readonly refSources = new Set<string>();
  private readonly client: KubeClient;
  private readonly say: Narrator["say"];
  private readonly narrator: Narrator;
  private readonly signal: AbortSignal;

  constructor(client: KubeClient, narrator: Narrator, signal: AbortSignal) {
    this.client = client;
    this.narrator = narrator;
    this.say = (m) => narrator.say(m);
    this.signal = signal;
  }

  /** Creates the request and starts its clock (the lifecycle timeout counts from creation). */
  async create(rr: ResolutionRequest): Promise<ResolutionRequest> {
    const created = await this.client.create(resolutionRequests, rr);
    const label = created.metadata.labels?.[LABEL_RESOLVER_TYPE];
    this.seen.set(keyOf(created), {
      label,
      condition: undefined,
      hasData: false,
      createdAt: performance.now(),
    });
    const labels = Object.entries(created.metadata.labels ?? {}).map(([k, v]) => `${k}=${v}`);
    this.note(created, `created${labels.length ? ` with ${labels.join(", ")}` : " with no labels"}`);
    return created;
  }

  note(rr: ResolutionRequest, message: string): void {
    this.say(`${`${rr.metadata.namespace}/${rr.metadata.name}`.padEnd(30)} ${message}`);
  }

  /** Watches one request until `until` holds, narrating what changes on the way (and progress past a second). */
  until(
    rr: ResolutionRequest,
    what: string,
    until: (rr: ResolutionRequest) => boolean,
    timeoutMs = 15_000,
  ): Promise<ResolutionRequest> {
    return this.narrator.waitFor(`${what} of ${rr.metadata.name}`, this.watch(rr, what, until, timeoutMs));
  }

  private async watch(
    rr: ResolutionRequest,
    what: string,
    until: (rr: ResolutionRequest) => boolean,
    timeoutMs: number,
  ): Promise<ResolutionRequest> {
    const { namespace, name } = rr.metadata;
    const deadline = AbortSignal.timeout(timeoutMs);
    const done = new AbortController();
    const signal = AbortSignal.any([this.signal, deadline, done.signal]);
    try {
      // a watch ends when the server closes it; start another (it replays the current state)
      for (;;) {
        const events = this.client.watch<ResolutionRequest>(
          resolutionRequests,
          namespace,
          { fieldSelector: `metadata.name=${name}`, timeoutSeconds: 30 },
          signal,
        );
        for await (const ev of events) {
          if (ev.type === "DELETED") throw new Error(`${namespace}/${name} was deleted`);
          if (ev.type !== "ADDED" && ev.type !== "MODIFIED") continue;
          this.observe(ev.object);
          if (until(ev.object)) return ev.object;
        }
      }
    } catch (err) {
      if (deadline.aborted && !this.signal.aborted) {
        throw new Error(`${namespace}/${name}: no ${what} within ${timeoutMs / 1000}s`);
      }
      throw err;
    } finally {
      done.abort();
    }
  }

  private observe(rr: ResolutionRequest): void {
    const seen = this.seen.get(keyOf(rr));
    if (!seen) return;
    const label = rr.metadata.labels?.[LABEL_RESOLVER_TYPE];
    if (label !== seen.label) {
      seen.label = label;
      this.note(rr, `label ${LABEL_RESOLVER_TYPE}=${label ?? "<none>"} set by the lifecycle controller`);
    }
    if (rr.status?.data && !seen.hasData) {
      // the resolver writes the data; the lifecycle controller then marks the request Succeeded
      seen.hasData = true;
      const bytes = Buffer.from(rr.status.data, "base64").length;
      this.note(
        rr,
        `${label ?? "the"} resolver wrote status.data (${bytes} bytes)  ${since(seen.createdAt)}`,
      );
      if (rr.status.refSource) {
        const ref = refSourceText(rr.status.refSource);
        const repeat = this.refSources.has(ref);
        this.refSources.add(ref);
        this.say(`${" ".repeat(33)}refSource ${repeat ? "the same as above" : ref}`);
      }
    }
    const condition = conditionText(rr);
    if (condition !== seen.condition) {
      seen.condition = condition;
      if (condition) this.note(rr, `${condition}${isDone(rr) ? `  ${since(seen.createdAt)}` : ""}`);
    }
  }
}

/** "(0.31s after creation)": sub-second resolutions are the point, so two decimals below 10s. */
function since(createdAt: number): string {
  const s = (performance.now() - createdAt) / 1000;
  return `(${s.toFixed(s < 10 ? 2 : 1)}s after creation)`;
}

/** `uri sha1:… entryPoint`, as `quarry resolve` prints it. */
export function refSourceText(ref: RefSource): string {
  const digest = Object.entries(ref.digest).map(([alg, hex]) => `${alg}:${hex}`);
  return [ref.uri, ...digest, ...(ref.entryPoint ? [ref.entryPoint] : [])].join(" ");
}

/**
 * `Succeeded=False ResolutionFailed (NotFound): message`, with Quarry's finer
 * reason from the status annotation when there is one; undefined before any condition.
 */
export function conditionText(rr: ResolutionRequest): string | undefined {
  const c = getCondition(rr.status, CONDITION_SUCCEEDED);
  if (!c) return undefined;
  let text = `${c.type}=${c.status}`;
  if (c.reason) text += ` ${c.reason}`;
  const finer = rr.status?.annotations?.[ANNOTATION_REASON];
  if (finer) text += ` (${finer})`;
  if (c.message) text += `: ${c.message}`;
  return text;
}

/** Waits for the request's outcome and fails the demo, saying why, if it is not the one the story expects. */
export async function outcome(
  t: Tracker,
  rr: ResolutionRequest,
  expected: "True" | "False",
): Promise<ResolutionRequest> {
  const done = await t.until(rr, "outcome", isDone);
  if (!succeededIs(expected)(done)) {
    throw new Error(`${done.metadata.namespace}/${done.metadata.name} ended ${conditionText(done)}`);
  }
  return done;
}

export function succeededIs(status: "True" | "False" | "Unknown") {
  return (rr: ResolutionRequest) => getCondition(rr.status, CONDITION_SUCCEEDED)?.status === status;
}

function keyOf(rr: ResolutionRequest): string {
  return `${rr.metadata.namespace}/${rr.metadata.name}`;
}
