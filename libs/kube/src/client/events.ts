// Kubernetes Events for humans (`kubectl describe`). Recording never fails a
// reconcile: errors are logged, and identical events are suppressed for a
// while so a hot loop cannot flood the apiserver.
import { hostname } from "node:os";
import type { Logger } from "@quarry/observability";
import type { KubeClient, KubeObject } from "./client.ts";
import { events } from "./resources.ts";

export type EventType = "Normal" | "Warning";

export interface EventRecorder {
  record(obj: KubeObject, type: EventType, reason: string, message: string): void;
}

const SUPPRESS_MS = 5 * 60_000;
const MAX_REMEMBERED = 4096;

export class KubeEventRecorder implements EventRecorder {
  private readonly recent = new Map<string, number>();
  private readonly client: KubeClient;
  private readonly component: string;
  private readonly log: Logger;
  private readonly instance = hostname();

  constructor(client: KubeClient, component: string, log: Logger) {
    this.client = client;
    this.component = component;
    this.log = log;
  }

  record(obj: KubeObject, type: EventType, reason: string, message: string): void {
    const { namespace, name, uid } = obj.metadata;
    if (!namespace || !name) return;
    const dedupeKey = `${uid ?? `${namespace}/${name}`}|${type}|${reason}|${message}`;
    const now = Date.now();
    const seen = this.recent.get(dedupeKey);
    if (seen !== undefined && now - seen < SUPPRESS_MS) return;
    this.recent.set(dedupeKey, now);
    if (this.recent.size > MAX_REMEMBERED) {
      const oldest = this.recent.keys().next().value;
      if (oldest !== undefined) this.recent.delete(oldest);
    }
    const ts = new Date(now).toISOString();
    const event = {
      apiVersion: "v1",
      kind: "Event",
      metadata: { generateName: `${name}.`, namespace },
      involvedObject: {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        name,
        namespace,
        uid,
        resourceVersion: obj.metadata.resourceVersion,
      },
      type,
      reason,
      message: message.slice(0, 1024),
      source: { component: this.component },
      reportingComponent: `quarry.dev/${this.component}`,
      reportingInstance: this.instance,
      firstTimestamp: ts,
      lastTimestamp: ts,
      count: 1,
    };
    this.client.create(events, event).catch((err: unknown) => {
      this.log.warn(
        { err: err instanceof Error ? err.message : String(err), reason },
        "could not record event",
      );
    });
  }
}
