#!/usr/bin/env node
// The demo's entry point (scripts/demo.sh runs it after its set-up). Wiring only.
import { DEMO_USAGE, DemoUsageError, parseDemoArgs } from "./args.ts";
import { runDemo } from "./demo.ts";

async function main(argv: readonly string[]): Promise<number> {
  try {
    const args = parseDemoArgs(argv);
    if (args === "help") {
      process.stdout.write(DEMO_USAGE);
      return 0;
    }
    return await runDemo({ keep: args.keep });
  } catch (e) {
    if (!(e instanceof DemoUsageError)) throw e;
    process.stderr.write(`error: ${e.message}\n${DEMO_USAGE}`);
    return 2;
  }
}

process.exit(await main(process.argv.slice(2)));
