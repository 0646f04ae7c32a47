#!/usr/bin/env node
// quarry: the command line. Wiring only: parse, run one command, map the
// outcome to an exit code (0 ok, 1 failed, 2 usage, 130 interrupted). Each
// command's modules (and the kube client) are imported only when that command
// runs, so `quarry --help`, `--version` and `completion` start at once.
import { type Command, parseCommandLine, UsageError } from "./args.ts";
import { USAGE } from "./help.ts";

const out = (s: string) => process.stdout.write(s);
const err = (s: string) => process.stderr.write(s);

async function main(argv: readonly string[]): Promise<number> {
  let cmd: Command;
  try {
    cmd = parseCommandLine(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    err(`error: ${e.message}\nRun "quarry help" for usage.\n`);
    return 2;
  }
  try {
    return await run(cmd);
  } catch (e) {
    const { describeError } = await import("./errors.ts");
    err(`${describeError(e)}\n`);
    return 1;
  }
}

async function run(cmd: Command): Promise<number> {
  switch (cmd.kind) {
    case "help":
      out(USAGE);
      return 0;
    case "clientVersion": {
      const { clientVersion } = await import("./version.ts");
      out(`quarry ${clientVersion()}\n`);
      return 0;
    }
    case "completion": {
      const { completionScript } = await import("./completion.ts");
      out(completionScript(cmd.shell));
      return 0;
    }
    case "get":
    case "getRuns": {
      const ctx = await context(cmd);
      const namespace = cmd.allNamespaces ? undefined : ctx.namespace;
      const opts = { ...cmd, namespace };
      const interrupt = interruptible();
      try {
        if (cmd.kind === "get") {
          const { runGet } = await import("./get.ts");
          await runGet(ctx.client, opts, out, err, interrupt.signal);
        } else {
          const { runGetRuns } = await import("./get-runs.ts");
          await runGetRuns(ctx.client, { ...opts, flavours: cmd.flavours }, out, err, interrupt.signal);
        }
      } finally {
        interrupt.done();
      }
      return interrupt.signal.aborted ? 130 : 0;
    }
    case "describe": {
      const ctx = await context(cmd);
      const { runDescribe } = await import("./describe.ts");
      for (const [i, name] of cmd.names.entries()) {
        if (i > 0) out("\n\n");
        await runDescribe(ctx.client, ctx.namespace, name, out);
      }
      return 0;
    }
    case "describeRuns": {
      const ctx = await context(cmd);
      const { runDescribeRun } = await import("./describe-run.ts");
      for (const [i, name] of cmd.names.entries()) {
        if (i > 0) out("\n\n");
        await runDescribeRun(ctx.client, ctx.namespace, name, cmd.flavour, out);
      }
      return 0;
    }
    case "describeTekton": {
      const ctx = await context(cmd);
      const { runDescribeTekton } = await import("./describe-tekton.ts");
      for (const [i, name] of cmd.names.entries()) {
        if (i > 0) out("\n\n");
        await runDescribeTekton(ctx.client, ctx.namespace, cmd.runKind, name, out);
      }
      return 0;
    }
    case "resolve": {
      const ctx = await context(cmd);
      const [{ runResolve }, { traced }] = await Promise.all([
        import("./resolve.ts"),
        import("./tracing.ts"),
      ]);
      const attributes = { "quarry.resolver": cmd.resolverType, "quarry.namespace": ctx.namespace };
      return await traced("quarry.resolve", attributes, () =>
        runResolve(ctx.client, { ...cmd, namespace: ctx.namespace }, out, err),
      );
    }
    case "version": {
      const v = await import("./version.ts");
      const client = v.clientVersion();
      let fleet: ReturnType<typeof v.fleetVersionOf> | string | undefined;
      if (!cmd.clientOnly) {
        try {
          const ctx = await context({ ...cmd, namespace: undefined });
          fleet = v.fleetVersionOf(await v.fleetDeployments(ctx.client, cmd.systemNamespace));
        } catch (e) {
          const { serverMessage } = await import("./errors.ts");
          fleet = `unreachable: ${serverMessage(e)}`;
        }
      }
      if (cmd.output === "table") out(v.formatVersion(client, fleet));
      else {
        const { formatDocument } = await import("./output.ts");
        const doc = { clientVersion: client, ...(fleet !== undefined && { fleetVersion: fleet }) };
        out(formatDocument(doc, cmd.output === "yaml" ? "yaml" : "json"));
      }
      return 0;
    }
    case "doctor": {
      const ctx = await context({ ...cmd, namespace: undefined });
      const [{ observe }, doctor] = await Promise.all([import("./doctor-fetch.ts"), import("./doctor.ts")]);
      const findings = doctor.doctorFindings(await observe(ctx.client, cmd.systemNamespace), Date.now());
      if (cmd.output === "table") out(doctor.formatFindings(findings));
      else {
        const { formatDocument } = await import("./output.ts");
        out(formatDocument({ findings }, cmd.output === "yaml" ? "yaml" : "json"));
      }
      return doctor.exitCodeOf(findings);
    }
  }
}

async function context(opts: {
  kubeconfig?: string | undefined;
  context?: string | undefined;
  namespace?: string | undefined;
}) {
  const { kubeContext } = await import("./context.ts");
  return kubeContext(opts);
}

/** Ctrl-C ends a watch: the signal aborts, the command returns, and the exit code says 130. */
function interruptible(): { signal: AbortSignal; done: () => void } {
  const abort = new AbortController();
  const onInterrupt = () => abort.abort();
  process.once("SIGINT", onInterrupt);
  process.once("SIGTERM", onInterrupt);
  return {
    signal: abort.signal,
    done: () => {
      process.off("SIGINT", onInterrupt);
      process.off("SIGTERM", onInterrupt);
    },
  };
}

// exit explicitly: idle keep-alive sockets to the apiserver would otherwise hold the process open
process.exit(await main(process.argv.slice(2)));
