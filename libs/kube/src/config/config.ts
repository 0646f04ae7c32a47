// A service's ConfigMap, watched live. A change that parses replaces the
// config; a malformed one keeps the last good config, logs the error and
// raises a Warning Event on the ConfigMap, so a typo never stops a controller.
// Warnings that do not make a config invalid (a key nobody reads) are logged
// and raised once per change of the ConfigMap's data, not on every relist.
import type { Logger } from "@quarry/observability";
import type { KubeClient, KubeObject } from "../client/client.ts";
import { errorMessage } from "../client/errors.ts";
import type { EventRecorder } from "../client/events.ts";
import { configMaps } from "../client/resources.ts";
import { Informer } from "../informers/informer.ts";

export interface ConfigMapObject extends KubeObject {
  data?: Record<string, string>;
}

/** Thrown by a parser; names the key at fault. */
export class ConfigError extends Error {
  readonly key: string;
  constructor(key: string, message: string) {
    super(`${key}: ${message}`);
    this.name = "ConfigError";
    this.key = key;
  }
}

/** Something in a ConfigMap that does not make it invalid but should not pass unnoticed. */
export interface ConfigWarning {
  /** The key at fault. */
  key: string;
  /** The Event's reason, e.g. UnknownConfigKey. */
  reason: string;
  /** What is wrong with the key; the ConfigMap is named by the caller. */
  message: string;
}

export interface LiveConfigOptions<T> {
  client: KubeClient;
  namespace: string;
  name: string;
  defaults: T;
  parse: (data: Record<string, string>, defaults: T) => T;
  log: Logger;
  recorder: EventRecorder;
  /** The informer's watchdog (InformerOptions.watchdogMs). */
  watchdogMs?: number;
  /** Warnings about the data, each logged and raised as a Warning Event once per change of the data. */
  warnings?: (data: Readonly<Record<string, string>>) => readonly ConfigWarning[];
}

export class LiveConfig<T> {
  readonly informer: Informer<ConfigMapObject>;
  private value: T;
  private readonly listeners: ((config: T) => void)[] = [];
  private readonly opts: LiveConfigOptions<T>;
  /** The data last checked for warnings: a relist or a metadata-only update does not warn again. */
  private warnedData: string | undefined;

  constructor(opts: LiveConfigOptions<T>) {
    this.opts = opts;
    this.value = opts.defaults;
    this.informer = new Informer<ConfigMapObject>(opts.client, configMaps, {
      log: opts.log,
      namespace: opts.namespace,
      fieldSelector: `metadata.name=${opts.name}`,
      resyncMs: 0,
      watchdogMs: opts.watchdogMs,
    });
    this.informer.on({
      onAdd: (cm) => this.load(cm),
      onUpdate: (_old, cm) => this.load(cm),
      onDelete: () => {
        this.warnedData = undefined;
        this.set(opts.defaults, "config map deleted, using defaults");
      },
    });
  }

  current(): T {
    return this.value;
  }

  onChange(fn: (config: T) => void): void {
    this.listeners.push(fn);
  }

  private load(cm: ConfigMapObject): void {
    this.warn(cm);
    let next: T;
    try {
      next = this.opts.parse(cm.data ?? {}, this.opts.defaults);
    } catch (err) {
      const message = `invalid config in ConfigMap ${this.opts.namespace}/${this.opts.name}, keeping the last good config: ${errorMessage(err)}`;
      this.opts.log.error({ configMap: this.opts.name, err: errorMessage(err) }, message);
      this.opts.recorder.record(cm, "Warning", "InvalidConfig", message);
      return;
    }
    this.set(next, "config loaded");
  }

  private warn(cm: ConfigMapObject): void {
    const data = cm.data ?? {};
    const content = dataFingerprint(data);
    if (content === this.warnedData || !this.opts.warnings) return;
    this.warnedData = content;
    const { namespace, name } = this.opts;
    const version = cm.metadata.resourceVersion;
    for (const w of this.opts.warnings(data)) {
      // the version makes each change's Event its own: the recorder suppresses repeats of a message
      const message = `ConfigMap ${namespace}/${name} (resourceVersion ${version}): ${w.message}`;
      this.opts.log.warn(
        { configMap: name, key: w.key, reason: w.reason, resourceVersion: version },
        message,
      );
      this.opts.recorder.record(cm, "Warning", w.reason, message);
    }
  }

  private set(next: T, why: string): void {
    this.value = next;
    this.opts.log.info({ configMap: this.opts.name, config: withoutUrlPasswords(next) }, why);
    for (const fn of this.listeners) fn(next);
  }
}

/** The data's identity, whatever order its keys came in. */
function dataFingerprint(data: Readonly<Record<string, string>>): string {
  return JSON.stringify(Object.entries(data).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * The config as logged: a URL's password (a proxy's `http://user:pass@host`) becomes `***`.
 * Config holds no other secrets: Secrets are read per request, never put in a ConfigMap.
 */
export function withoutUrlPasswords(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return value.replace(/(\/\/[^/@:\s]*):[^/@\s]*@/g, "$1:***@");
  if (depth > 8 || value === null || typeof value !== "object" || value instanceof RegExp) return value;
  if (value instanceof Map)
    return new Map([...value].map(([k, v]) => [k, withoutUrlPasswords(v, depth + 1)]));
  if (value instanceof Set) return value;
  if (Array.isArray(value)) return value.map((v) => withoutUrlPasswords(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutUrlPasswords(v, depth + 1)]));
}
