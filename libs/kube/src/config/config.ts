// A service's ConfigMap, watched live, and any ConfigMaps read in place over
// it (Tekton's own, where Tekton keeps them): their data is merged, a later
// source's key winning, and parsed as one. A change that parses replaces the
// config; a malformed one keeps the last good config, logs the error and
// raises a Warning Event on the ConfigMap holding the key at fault, so a typo
// never stops a controller. Warnings that do not make a config invalid (a key
// nobody reads) are logged and raised once per change of a ConfigMap's data,
// not on every relist.
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

/** A ConfigMap by namespace and name. */
export interface ConfigMapRef {
  namespace: string;
  name: string;
}

export interface LiveConfigOptions<T> {
  client: KubeClient;
  namespace: string;
  name: string;
  /**
   * ConfigMaps read in place over this one, in order: a key one of them sets wins over the same
   * key in the ConfigMaps before it. A missing one adds nothing.
   */
  overlays?: readonly ConfigMapRef[];
  defaults: T;
  parse: (data: Record<string, string>, defaults: T) => T;
  log: Logger;
  recorder: EventRecorder;
  /** The informer's watchdog (InformerOptions.watchdogMs). */
  watchdogMs?: number;
  /**
   * Warnings about one ConfigMap's data, each logged and raised as a Warning Event on that
   * ConfigMap once per change of its data.
   */
  warnings?: (data: Readonly<Record<string, string>>) => readonly ConfigWarning[];
}

/** One ConfigMap the config is read from, and what was last seen of it. */
interface Source {
  ref: ConfigMapRef;
  informer: Informer<ConfigMapObject>;
  object: ConfigMapObject | undefined;
  /** The data last checked for warnings: a relist or a metadata-only update does not warn again. */
  warnedData: string | undefined;
}

export class LiveConfig<T> {
  /** The service's own ConfigMap's informer. */
  readonly informer: Informer<ConfigMapObject>;
  /** Every source's informer, the own one first (each joins the runtime's readiness). */
  readonly informers: readonly Informer<ConfigMapObject>[];
  private value: T;
  private readonly listeners: ((config: T) => void)[] = [];
  private readonly opts: LiveConfigOptions<T>;
  private readonly sources: Source[];
  /** Every source listed once: before that a parse error may come from a half-read config, so it is not reported. */
  private synced = false;
  /** The merged data last parsed, or last reported invalid. */
  private parsedData: string | undefined;

  constructor(opts: LiveConfigOptions<T>) {
    this.opts = opts;
    this.value = opts.defaults;
    const refs = [{ namespace: opts.namespace, name: opts.name }, ...(opts.overlays ?? [])];
    this.sources = refs.map((ref) => this.source(ref));
    this.informer = this.sources[0]!.informer;
    this.informers = this.sources.map((s) => s.informer);
    void Promise.all(this.informers.map((i) => i.waitForSync())).then(() => {
      this.synced = true;
      this.refresh();
    });
  }

  current(): T {
    return this.value;
  }

  onChange(fn: (config: T) => void): void {
    this.listeners.push(fn);
  }

  private source(ref: ConfigMapRef): Source {
    const informer = new Informer<ConfigMapObject>(this.opts.client, configMaps, {
      log: this.opts.log,
      namespace: ref.namespace,
      fieldSelector: `metadata.name=${ref.name}`,
      resyncMs: 0,
      watchdogMs: this.opts.watchdogMs,
    });
    const source: Source = { ref, informer, object: undefined, warnedData: undefined };
    const seen = (cm: ConfigMapObject | undefined) => {
      source.object = cm;
      if (cm) this.warn(source, cm);
      else source.warnedData = undefined;
      this.refresh();
    };
    informer.on({ onAdd: seen, onUpdate: (_old, cm) => seen(cm), onDelete: () => seen(undefined) });
    return source;
  }

  /** Parses the sources' merged data when it changed; with none left, the defaults. */
  private refresh(): void {
    const present = this.sources.filter((s) => s.object !== undefined);
    const merged: Record<string, string> = Object.assign({}, ...present.map((s) => s.object?.data ?? {}));
    const content = present.length === 0 ? undefined : dataFingerprint(merged);
    if (content === this.parsedData) return;
    if (content === undefined) {
      this.parsedData = undefined;
      this.set(this.opts.defaults, "config map deleted, using defaults");
      return;
    }
    let next: T;
    try {
      next = this.opts.parse(merged, this.opts.defaults);
    } catch (err) {
      if (!this.synced) return;
      this.parsedData = content;
      const at = holderOf(present, err) ?? present[0]!;
      const where =
        this.sources.length > 1 ? ` (key read from ConfigMap ${at.ref.namespace}/${at.ref.name})` : "";
      const message = `invalid config in ConfigMap ${this.opts.namespace}/${this.opts.name}${where}, keeping the last good config: ${errorMessage(err)}`;
      this.opts.log.error({ configMap: this.opts.name, err: errorMessage(err) }, message);
      this.opts.recorder.record(at.object!, "Warning", "InvalidConfig", message);
      return;
    }
    this.parsedData = content;
    this.set(next, "config loaded");
  }

  private warn(source: Source, cm: ConfigMapObject): void {
    const data = cm.data ?? {};
    const content = dataFingerprint(data);
    if (content === source.warnedData || !this.opts.warnings) return;
    source.warnedData = content;
    const { namespace, name } = source.ref;
    const version = cm.metadata.resourceVersion;
    for (const w of this.opts.warnings(data)) {
      // the version makes each change's Event its own: the recorder suppresses repeats of a message
      const message = `ConfigMap ${namespace}/${name} (resourceVersion ${version}): ${w.message}`;
      this.opts.log.warn(
        { configMap: name, namespace, key: w.key, reason: w.reason, resourceVersion: version },
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

/** The source whose value of the ConfigError's key won the merge (the last one setting it). */
function holderOf(present: readonly Source[], err: unknown): Source | undefined {
  if (!(err instanceof ConfigError)) return undefined;
  const key = err.key;
  return present.findLast((s) => s.object?.data?.[key] !== undefined);
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
