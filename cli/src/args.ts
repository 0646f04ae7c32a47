// The command line, parsed with node:util's parseArgs. Flags may come before
// or after the command, as with kubectl; each command then rejects the flags
// that mean nothing to it instead of ignoring them.
import { parseArgs } from "node:util";
import type { RunFlavour } from "@quarry/api";

export type Command =
  | { kind: "get"; namespace: string | undefined; allNamespaces: boolean; kubeconfig: string | undefined }
  | {
      kind: "getRuns";
      /** Which flavours to list: both for `runs`, CustomRuns for `customruns` or `--kind CustomRun`. */
      flavours: RunFlavour[];
      namespace: string | undefined;
      allNamespaces: boolean;
      kubeconfig: string | undefined;
    }
  | { kind: "describe"; names: string[]; namespace: string | undefined; kubeconfig: string | undefined }
  | {
      kind: "describeRuns";
      names: string[];
      /** undefined: a CustomRun of that name, else a Run. */
      flavour: RunFlavour | undefined;
      namespace: string | undefined;
      kubeconfig: string | undefined;
    }
  | {
      kind: "resolve";
      resolverType: string;
      params: { name: string; value: string }[];
      namespace: string | undefined;
      kubeconfig: string | undefined;
      timeoutMs: number;
    }
  | { kind: "help" };

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

const options = {
  namespace: { type: "string", short: "n" },
  "all-namespaces": { type: "boolean", short: "A" },
  kubeconfig: { type: "string" },
  timeout: { type: "string" },
  kind: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

type Flag = keyof typeof options;
type Verb = "get" | "describe" | "resolve" | "help";
const allowed: Record<Verb, readonly Flag[]> = {
  get: ["namespace", "all-namespaces", "kubeconfig", "kind"],
  describe: ["namespace", "kubeconfig", "kind"],
  resolve: ["namespace", "kubeconfig", "timeout"],
  help: [],
};

export function parseCommandLine(argv: readonly string[]): Command {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const { values, positionals } = parsed;
  const [name, ...args] = positionals;
  if (values.help || name === undefined || name === "help") return { kind: "help" };
  if (!isVerb(name)) throw new UsageError(`unknown command "${name}"`);
  for (const flag of Object.keys(values) as Flag[]) {
    if (!allowed[name].includes(flag)) throw new UsageError(`"${name}" takes no --${flag}`);
  }
  switch (name) {
    case "get": {
      // `get` alone lists requests; a resource word picks what to list, as `kubectl get TYPE` does
      const resource = args[0] === undefined ? "requests" : resourceOf(args[0]);
      if (resource === undefined)
        throw new UsageError(
          `"get" takes a resource type (requests, runs, customruns), not a name; use "describe ${args[0]}" for one request`,
        );
      if (args.length > 1) {
        const one = resource === "requests" ? "" : `${resource.replace(/s$/, "")} `;
        throw new UsageError(`"get" lists them all; use "describe ${one}${args[1]}" for one`);
      }
      if (values.namespace !== undefined && values["all-namespaces"])
        throw new UsageError("-n and -A cannot be used together");
      const scope = {
        namespace: values.namespace,
        allNamespaces: values["all-namespaces"] ?? false,
        kubeconfig: values.kubeconfig,
      };
      if (resource === "requests") {
        rejectKindFlag(values.kind, "get runs");
        return { kind: "get", ...scope };
      }
      const flavour = runFlavour(resource, values.kind);
      return { kind: "getRuns", flavours: flavour ? [flavour] : ["Run", "CustomRun"], ...scope };
    }
    case "describe": {
      const resource = args[0] === undefined ? undefined : resourceOf(args[0]);
      // a bare name (or names) describes requests, as before resource words existed
      const names = resource === undefined ? args : args.slice(1);
      const scope = { namespace: values.namespace, kubeconfig: values.kubeconfig };
      if (resource === undefined || resource === "requests") {
        if (names.length === 0) throw new UsageError(`"describe" needs the name of a ResolutionRequest`);
        rejectKindFlag(values.kind, `describe run ${names[0]}`);
        return { kind: "describe", names, ...scope };
      }
      if (names.length === 0) throw new UsageError(`"describe ${args[0]}" needs the name of a run`);
      return { kind: "describeRuns", names, flavour: runFlavour(resource, values.kind), ...scope };
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
        values.timeout === undefined ? 90_000 : Number(values.timeout.replace(/s$/, "")) * 1000;
      if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
        throw new UsageError(`--timeout takes seconds, e.g. 60s`);
      return {
        kind: "resolve",
        resolverType,
        params,
        namespace: values.namespace,
        kubeconfig: values.kubeconfig,
        timeoutMs,
      };
    }
    case "help":
      return { kind: "help" };
  }
}

function isVerb(name: string): name is Verb {
  return Object.hasOwn(allowed, name);
}

type Resource = "requests" | "runs" | "customruns";

/** The resource words `get` and `describe` take, singular or plural, any case (kubectl's leniency). */
const RESOURCES: Readonly<Record<string, Resource>> = {
  resolutionrequests: "requests",
  resolutionrequest: "requests",
  requests: "requests",
  request: "requests",
  runs: "runs",
  run: "runs",
  customruns: "customruns",
  customrun: "customruns",
};

function resourceOf(word: string): Resource | undefined {
  const lower = word.toLowerCase();
  return Object.hasOwn(RESOURCES, lower) ? RESOURCES[lower] : undefined;
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
