// The demo's command line: `scripts/demo.sh [--keep]`.
import { parseArgs } from "node:util";

export interface DemoArgs {
  keep: boolean;
}

export const DEMO_USAGE = `usage: scripts/demo.sh [--keep]

Starts an embedded control plane, a real node, a git server, an OCI registry and the fleet
(lifecycle controller, git, bundle, cluster and pipe resolvers, run-controller, Wait task);
resolves Tasks from git, a bundle and the cluster, and their failures; runs Wait runs and a
Pipe run that makes a certificate into Secrets; prints get/describe/resolve; tears down.

  --keep    leave the cluster running and print how to reach it; Ctrl-C stops it
  -h        this text
`;

export class DemoUsageError extends Error {}

/** The demo's flags, or "help"; anything else is a DemoUsageError. */
export function parseDemoArgs(argv: readonly string[]): DemoArgs | "help" {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new DemoUsageError(err instanceof Error ? err.message : String(err));
  }
  if (parsed.values.help) return "help";
  if (parsed.positionals.length > 0) throw new DemoUsageError(`the demo takes no arguments`);
  return { keep: parsed.values.keep ?? false };
}

const options = {
  keep: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;
