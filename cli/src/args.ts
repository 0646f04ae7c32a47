// The command line, parsed with node:util's parseArgs. Flags may come before
// or after the command, as with kubectl; each command then rejects the flags
// that mean nothing to it instead of ignoring them.
import { parseArgs } from "node:util";

export type Command =
  | { kind: "get"; namespace: string | undefined; allNamespaces: boolean; kubeconfig: string | undefined }
  | { kind: "describe"; names: string[]; namespace: string | undefined; kubeconfig: string | undefined }
  | { kind: "demo"; keep: boolean }
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
  keep: { type: "boolean" },
  timeout: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

type Flag = keyof typeof options;
const allowed: Record<Command["kind"], readonly Flag[]> = {
  get: ["namespace", "all-namespaces", "kubeconfig"],
  describe: ["namespace", "kubeconfig"],
  demo: ["keep"],
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
  if (!isKind(name)) throw new UsageError(`unknown command "${name}"`);
  for (const flag of Object.keys(values) as Flag[]) {
    if (!allowed[name].includes(flag)) throw new UsageError(`"${name}" takes no --${flag}`);
  }
  switch (name) {
    case "get":
      if (args.length > 0)
        throw new UsageError(`"get" lists all requests; use "describe ${args[0]}" for one`);
      if (values.namespace !== undefined && values["all-namespaces"])
        throw new UsageError("-n and -A cannot be used together");
      return {
        kind: "get",
        namespace: values.namespace,
        allNamespaces: values["all-namespaces"] ?? false,
        kubeconfig: values.kubeconfig,
      };
    case "describe":
      if (args.length === 0) throw new UsageError(`"describe" needs the name of a ResolutionRequest`);
      return { kind: "describe", names: args, namespace: values.namespace, kubeconfig: values.kubeconfig };
    case "demo":
      if (args.length > 0) throw new UsageError(`"demo" takes no arguments`);
      return { kind: "demo", keep: values.keep ?? false };
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

function isKind(name: string): name is Command["kind"] {
  return Object.hasOwn(allowed, name);
}
