// An EventRecorder for tests: keeps what would have become Events.
import type { KubeObject } from "../client/client.ts";
import type { EventRecorder, EventType } from "../client/events.ts";
import { objectKey } from "../informers/informer.ts";

export interface RecordedEvent {
  /** The involved object's "namespace/name". */
  object: string;
  type: EventType;
  reason: string;
  message: string;
}

export class FakeEventRecorder implements EventRecorder {
  readonly events: RecordedEvent[] = [];

  record(obj: KubeObject, type: EventType, reason: string, message: string): void {
    this.events.push({ object: objectKey(obj), type, reason, message });
  }
}
