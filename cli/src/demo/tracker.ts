// Follows the demo's requests through the API (a watch per wait, as a client
// would) and narrates each change of resolver label or Succeeded condition
// once, however many waits observe it.
import { performance } from "node:perf_hooks";
import {
  CONDITION_SUCCEEDED,
  getCondition,
  isDone,
  LABEL_RESOLVER_TYPE,
  type ResolutionRequest,
} from "@quarry/api";
import { type KubeClient, resolutionRequests } from "@quarry/kube";
import type { Narrator } from "./narrator.ts";

interface Seen {
  label: string | undefined;
  condition: string | undefined;
  createdAt: number;
}

export class Tracker {
  private readonly seen = new Map<string, Seen>();
  private readonly client: KubeClient;
  private readonly say: Narrator["say"];
  private readonly signal: AbortSignal;

  constructor(client: KubeClient, narrator: Narrator, signal: AbortSignal) {
    this.client = client;
    this.say = (m) => narrator.say(m);
    this.signal = signal;
  }

  /** Creates the request and starts its clock (the lifecycle timeout counts from creation). */
  async create(rr: ResolutionRequest): Promise<ResolutionRequest> {
    const created = await this.client.create(resolutionRequests, rr);
    const label = created.metadata.labels?.[LABEL_RESOLVER_TYPE];
    this.seen.set(keyOf(created), { label, condition: undefined, createdAt: performance.now() });
    const labels = Object.entries(created.metadata.labels ?? {}).map(([k, v]) => `${k}=${v}`);
    this.note(created, `created${labels.length ? ` with ${labels.join(", ")}` : " with no labels"}`);
    return created;
  }

  note(rr: ResolutionRequest, message: string): void {
    this.say(`${`${rr.metadata.namespace}/${rr.metadata.name}`.padEnd(30)} ${message}`);
  }

  /** Watches one request until `until` holds, narrating what changes on the way. */
  async until(
    rr: ResolutionRequest,
    what: string,
    until: (rr: ResolutionRequest) => boolean,
    timeoutMs = 15_000,
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
    const condition = conditionText(rr);
    if (condition !== seen.condition) {
      seen.condition = condition;
      const after = isDone(rr)
        ? `  (${((performance.now() - seen.createdAt) / 1000).toFixed(1)}s after creation)`
        : "";
      if (condition) this.note(rr, `${condition}${after}`);
    }
  }
}

/** `Succeeded=False ResolutionTimedOut: message`; undefined before any condition. */
export function conditionText(rr: ResolutionRequest): string | undefined {
  const c = getCondition(rr.status, CONDITION_SUCCEEDED);
  if (!c) return undefined;
  let text = `${c.type}=${c.status}`;
  if (c.reason) text += ` ${c.reason}`;
  if (c.message) text += `: ${c.message}`;
  return text;
}

export function succeededIs(status: "True" | "False" | "Unknown") {
  return (rr: ResolutionRequest) => getCondition(rr.status, CONDITION_SUCCEEDED)?.status === status;
}

function keyOf(rr: ResolutionRequest): string {
  return `${rr.metadata.namespace}/${rr.metadata.name}`;
}
