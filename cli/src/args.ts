// The command line, parsed with node:util's parseArgs. Flags may come before
// or after the command, as with kubectl; each command then rejects the flags
// that mean nothing to it instead of ignoring them.
import { parseArgs } from "node:util";
import type { RunFlavour } from "@quarry/api";
import { parseDuration } from "@quarry/kube";

/** `-o`: kubectl's output formats; "table" is the default (no -o). */
export type OutputFormat = "table" | "wide" | "json" | "yaml" | "name";
export const OUTPUT_FORMATS: readonly OutputFormat[] = ["wide", "json", "yaml", "name"];

/** Tekton's own runs, which `describe` follows down to their ResolutionRequests. */
export type TektonRunKind = "TaskRun" | "PipelineRun";

export type Shell = "bash" | "zsh" | "fish";
export const SHELLS: readonly Shell[] = ["bash", "zsh", "fish"];

/** Which cluster and namespace a command talks to. */
export interface Target {
  namespace: string | undefined;
  kubeconfig: string | undefined;
  /** --context: a kubeconfig context other than the current one. */
  context: string | undefined;
}

/** What `get` lists and how it prints it. */
export interface Listing extends Target {
  allNamespaces: boolean;
  /** Names asked for (none: all of them). */
  names: string[];
  output: OutputFormat;
  /** -l: a label selector, passed to the apiserver. */
  selector: string | undefined;
  /** -w: keep printing changes until interrupted. */
  watch: boolean;
}

export type Command =
  | ({ kind: "get" } & Listing)
  | ({
      kind: "getRuns";
      /** Which flavours to list: both for `runs`, CustomRuns for `customruns` or `--kind CustomRun`. */
      flavours: RunFlavour[];
    } & Listing)
  | ({ kind: "describe"; names: string[] } & Target)
  | ({
      kind: "describeRuns";
      names: string[];
      /** undefined: a CustomRun of that name, else a Run. */
      flavour: RunFlavour | undefined;
    } & Target)
  | ({ kind: "describeTekton"; runKind: TektonRunKind; names: string[] } & Target)
  | ({
      kind: "resolve";
      resolverType: string;
      params: { name: string; value: string }[];
      timeoutMs: number;
    } & Target)
  | {
      kind: "version";
      /** --client: do not ask the cluster. */
      clientOnly: boolean;
      output: OutputFormat;
      kubeconfig: string | undefined;
      context: string | undefined;
      systemNamespace: string;
    }
  | {
      kind: "doctor";
      output: OutputFormat;
      kubeconfig: string | undefined;
      context: string | undefined;
      systemNamespace: string;
    }
  | { kind: "completion"; shell: Shell }
  | { kind: "clientVersion" }
  | { kind: "help" };

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** Where the charts install the fleet unless told otherwise (the services' own default too). */
export const DEFAULT_SYSTEM_NAMESPACE = "quarry-system";
const DEFAULT_RESOLVE_TIMEOUT_MS = 90_000;

export const options = {
  namespace: { type: "string", short: "n" },
  "all-namespaces": { type: "boolean", short: "A" },
  kubeconfig: { type: "string" },
  context: { type: "string" },
  output: { type: "string", short: "o" },
  selector: { type: "string", short: "l" },
  watch: { type: "boolean", short: "w" },
  timeout: { type: "string" },
  kind: { type: "string" },
  client: { type: "boolean" },
  "system-namespace": { type: "string" },
  version: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

type Flag = keyof typeof options;
export type Verb = "get" | "describe" | "resolve" | "version" | "doctor" | "completion" | "help";
const CLUSTER: readonly Flag[] = ["kubeconfig", "context"];
export const VERB_FLAGS: Readonly<Record<Verb, readonly Flag[]>> = {
  get: ["namespace", "all-namespaces", ...CLUSTER, "kind", "output", "selector", "watch"],
  describe: ["namespace", ...CLUSTER, "kind"],
  resolve: ["namespace", ...CLUSTER, "timeout"],
  version: [...CLUSTER, "client", "output", "system-namespace"],
  doctor: [...CLUSTER, "output", "system-namespace"],
  completion: [],
  help: [],
};

/** The resource words `get` and `describe` take (completion offers them). */
export const GET_RESOURCES = ["requests", "runs", "customruns"] as const;
export const DESCRIBE_RESOURCES = ["request", "run", "customrun", "taskrun", "pipelinerun"] as const;

export function parseCommandLine(argv: readonly string[]): Command {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const { values, positionals } = parsed;
  const [name, ...args] = positionals;
  if (values.help || name === "help") return { kind: "help" };
  if (name === undefined) return values.version ? { kind: "clientVersion" } : { kind: "help" };
  if (!isVerb(name)) throw new UsageError(`unknown command "${name}"`);
  for (const flag of Object.keys(values) as Flag[]) {
    if (!VERB_FLAGS[name].includes(flag)) throw new UsageError(`"${name}" takes no --${flag}`);
  }
  const cluster = { kubeconfig: values.kubeconfig, context: values.context };
  const target: Target = { namespace: values.namespace, ...cluster };
  switch (name) {
    case "get": {
      // `get` alone lists requests; a resource word picks what to list, as `kubectl get TYPE` does
      const resource = args[0] === undefined ? "requests" : resourceOf(args[0]);
      if (resource === undefined || !isGetResource(resource))
        throw new UsageError(
          `"get" takes a resource type (requests, runs, customruns) before names; use "describe ${args[0]}" for one request`,
        );
      if (values.namespace !== undefined && values["all-namespaces"])
        throw new UsageError("-n and -A cannot be used together");
      const names = args.slice(1);
      if (names.length > 0 && (values["all-namespaces"] || values.selector !== undefined))
        throw new UsageError("names cannot be combined with -A or -l: name one namespace with -n");
      const listing: Listing = {
        ...target,
        allNamespaces: values["all-namespaces"] ?? false,
        names,
        output: outputFormat(values.output),
        selector: values.selector,
        watch: values.watch ?? false,
      };
      if (listing.watch && names.length > 0) throw new UsageError("-w watches a listing, not names");
      if (resource === "requests") {
        rejectKindFlag(values.kind, "get runs");
        return { kind: "get", ...listing };
      }
      const flavour = runFlavour(resource, values.kind);
      return { kind: "getRuns", flavours: flavour ? [flavour] : ["Run", "CustomRun"], ...listing };
    }
    case "describe": {
      const resource = args[0] === undefined ? undefined : resourceOf(args[0]);
      // a bare name (or names) describes requests, as before resource words existed
      const names = resource === undefined ? args : args.slice(1);
      if (resource === undefined || resource === "requests") {
        if (names.length === 0) throw new UsageError(`"describe" needs the name of a ResolutionRequest`);
        rejectKindFlag(values.kind, `describe run ${names[0]}`);
        return { kind: "describe", names, ...target };
      }
      if (names.length === 0) throw new UsageError(`"describe ${args[0]}" needs the name of a run`);
      if (resource === "taskruns" || resource === "pipelineruns") {
        if (values.kind !== undefined) throw new UsageError(`--kind is for runs and customruns`);
        const runKind = resource === "taskruns" ? "TaskRun" : "PipelineRun";
        return { kind: "describeTekton", runKind, names, ...target };
      }
      return { kind: "describeRuns", names, flavour: runFlavour(resource, values.kind), ...target };
    }
    case "resolve": {
      const [resolverType, ...pairs] = args;
      if (!resolverType)
        throw new UsageError(`"resolve" needs a resolver type, e.g. "resolve git url=... pathInRepo=..."`);
      const params = pairs.map((pair) => {
        const eq = pair.indexOf("=");
        if (eq <= 0) throw new UsageError(`"${pair}" is not key=value`);
        return { name: pair.slice(0, eq), value: pair.slice(eq + 1) };
      });
      const timeoutMs =
        values.timeout === undefined ? DEFAULT_RESOLVE_TIMEOUT_MS : durationMs(values.timeout, "--timeout");
      return { kind: "resolve", resolverType, params, timeoutMs, ...target };
    }
    case "version":
    case "doctor": {
      if (args.length > 0) throw new UsageError(`"${name}" takes no arguments`);
      const output = outputFormat(values.output);
      if (output !== "table" && output !== "json" && output !== "yaml")
        throw new UsageError(`"${name}" prints -o json or -o yaml, not ${output}`);
      const systemNamespace = values["system-namespace"] || DEFAULT_SYSTEM_NAMESPACE;
      if (name === "doctor") return { kind: "doctor", output, systemNamespace, ...cluster };
      return { kind: "version", clientOnly: values.client ?? false, output, systemNamespace, ...cluster };
    }
    case "completion": {
      const [shell, ...rest] = args;
      if (shell === undefined || !(SHELLS as readonly string[]).includes(shell) || rest.length > 0)
        throw new UsageError(`"completion" takes one shell: ${SHELLS.join(", ")}`);
      return { kind: "completion", shell: shell as Shell };
    }
    case "help":
      return { kind: "help" };
  }
}

/**
 * Milliseconds of a duration as kubectl and Tekton write them ("90s", "1m", "1m30s", "500ms");
 * a bare number is seconds.
 */
export function durationMs(text: string, flag: string): number {
  let ms: number;
  try {
    ms = /^\d+(\.\d+)?$/.test(text) ? Number(text) * 1000 : parseDuration(text);
  } catch {
    ms = Number.NaN;
  }
  if (!Number.isFinite(ms) || ms <= 0) throw new UsageError(`${flag} takes a duration, e.g. 90s, 1m, 1m30s`);
  return ms;
}

function outputFormat(value: string | undefined): OutputFormat {
  if (value === undefined) return "table";
  if ((OUTPUT_FORMATS as readonly string[]).includes(value)) return value as OutputFormat;
  throw new UsageError(`-o takes ${OUTPUT_FORMATS.join(", ")}, not "${value}"`);
}

function isVerb(name: string): name is Verb {
  return Object.hasOwn(VERB_FLAGS, name);
}

type Resource = "requests" | "runs" | "customruns" | "taskruns" | "pipelineruns";

/** The resource words `get` and `describe` take, singular or plural, any case (kubectl's leniency). */
const RESOURCES: Readonly<Record<string, Resource>> = {
  resolutionrequests: "requests",
  resolutionrequest: "requests",
  requests: "requests",
  request: "requests",
  rr: "requests",
  runs: "runs",
  run: "runs",
  customruns: "customruns",
  customrun: "customruns",
  taskruns: "taskruns",
  taskrun: "taskruns",
  tr: "taskruns",
  pipelineruns: "pipelineruns",
  pipelinerun: "pipelineruns",
  pr: "pipelineruns",
};

function resourceOf(word: string): Resource | undefined {
  const lower = word.toLowerCase();
  return Object.hasOwn(RESOURCES, lower) ? RESOURCES[lower] : undefined;
}

function isGetResource(r: Resource): r is "requests" | "runs" | "customruns" {
  return r === "requests" || r === "runs" || r === "customruns";
}

function rejectKindFlag(kind: string | undefined, example: string): void {
  if (kind !== undefined) throw new UsageError(`--kind is for runs, e.g. "${example} --kind CustomRun"`);
}

/** The one flavour asked for (the `customruns` word or `--kind`), or undefined for both. */
function runFlavour(resource: "runs" | "customruns", kind: string | undefined): RunFlavour | undefined {
  let flag: RunFlavour | undefined;
  if (kind !== undefined) {
    const lower = kind.toLowerCase();
    if (lower === "run") flag = "Run";
    else if (lower === "customrun") flag = "CustomRun";
    else throw new UsageError(`--kind takes Run or CustomRun, not "${kind}"`);
  }
  if (resource === "customruns") {
    if (flag === "Run") throw new UsageError(`"customruns" and --kind Run contradict each other`);
    return "CustomRun";
  }
  return flag;
}
