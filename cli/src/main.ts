#!/usr/bin/env node
// quarry: the command line. Wiring only: parse, run one command, map the
// outcome to an exit code (0 ok, 1 failed, 2 usage, 130 interrupted).
import { parseCommandLine, UsageError } from "./args.ts";
import { kubeContext } from "./context.ts";
import { runDescribe } from "./describe.ts";
import { runDescribeRun } from "./describe-run.ts";
import { describeError } from "./errors.ts";
import { runGet } from "./get.ts";
import { runGetRuns } from "./get-runs.ts";
import { USAGE } from "./help.ts";
import { runResolve } from "./resolve.ts";
import { traced } from "./tracing.ts";

const out = (s: string) => process.stdout.write(s);
const err = (s: string) => process.stderr.write(s);

async function main(argv: readonly string[]): Promise<number> {
  let cmd: ReturnType<typeof parseCommandLine>;
  try {
    cmd = parseCommandLine(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    err(`error: ${e.message}\nRun "quarry help" for usage.\n`);
    return 2;
  }
  try {
    switch (cmd.kind) {
      case "help":
        out(USAGE);
        return 0;
      case "get": {
        const ctx = kubeContext(cmd);
        await runGet(ctx.client, { namespace: cmd.allNamespaces ? undefined : ctx.namespace }, out, err);
        return 0;
      }
      case "getRuns": {
        const ctx = kubeContext(cmd);
        const namespace = cmd.allNamespaces ? undefined : ctx.namespace;
        await runGetRuns(ctx.client, { namespace, flavours: cmd.flavours }, out, err);
        return 0;
      }
      case "describe": {
        const ctx = kubeContext(cmd);
        for (const [i, name] of cmd.names.entries()) {
          if (i > 0) out("\n\n");
          await runDescribe(ctx.client, ctx.namespace, name, out);
        }
        return 0;
      }
      case "describeRuns": {
        const ctx = kubeContext(cmd);
        for (const [i, name] of cmd.names.entries()) {
          if (i > 0) out("\n\n");
          await runDescribeRun(ctx.client, ctx.namespace, name, cmd.flavour, out);
        }
        return 0;
      }
      case "resolve": {
        const ctx = kubeContext(cmd);
        const attributes = { "quarry.resolver": cmd.resolverType, "quarry.namespace": ctx.namespace };
        return await traced("quarry.resolve", attributes, () =>
          runResolve(ctx.client, { ...cmd, namespace: ctx.namespace }, out, err),
        );
      }
    }
  } catch (e) {
    err(`${describeError(e)}\n`);
    return 1;
  }
}

// exit explicitly: idle keep-alive sockets to the apiserver would otherwise hold the process open
process.exit(await main(process.argv.slice(2)));
