// The flags every load benchmark shares (how many requests, how many
// clients, warm-up, deadline, log level, where to write results), parsed one
// way; a script adds its own options beside them.
import { intFlag } from "./run.ts";

/** parseArgs options for the shared flags; spread a script's own options beside them. */
export function loadOptions(defaults: { requests: string; deadline: string }) {
  return {
    requests: { type: "string", default: defaults.requests },
    concurrency: { type: "string", default: "16" },
    warmup: { type: "string", default: "20" },
    deadline: { type: "string", default: defaults.deadline },
    "log-level": { type: "string", default: "info" },
    json: { type: "string" },
    samples: { type: "string" },
    help: { type: "boolean", short: "h" },
  } as const;
}

export interface LoadSizes {
  requests: number;
  concurrency: number;
  warmup: number;
  deadlineSeconds: number;
}

/** Prints usage and exits on --help; checks the shared integer flags (exit 2 on a bad one). */
export function loadSizes(
  flags: { help?: boolean; requests: string; concurrency: string; warmup: string; deadline: string },
  usage: string,
): LoadSizes {
  if (flags.help) {
    console.log(usage);
    process.exit(0);
  }
  return {
    requests: intFlag("requests", flags.requests, 1, usage),
    concurrency: intFlag("concurrency", flags.concurrency, 1, usage),
    warmup: intFlag("warmup", flags.warmup, 0, usage),
    deadlineSeconds: intFlag("deadline", flags.deadline, 10, usage),
  };
}

/** The phases named by --phases, in the script's own order; an unknown name exits 2. */
export function selectPhases<P extends string>(raw: string, all: readonly P[], usage: string): P[] {
  const selected = raw.split(",").map((p) => p.trim());
  for (const p of selected) {
    if (!(all as readonly string[]).includes(p)) {
      console.error(`unknown phase "${p}"\n${usage}`);
      process.exit(2);
    }
  }
  return all.filter((p) => selected.includes(p));
}
