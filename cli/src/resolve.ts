// quarry resolve: ask a resolver for something, as Tekton would, and show
// the answer. The request gets a fresh name per invocation (the CLI is not an
// owner that should adopt an old answer).
import { randomBytes } from "node:crypto";
import type { KubeClient } from "@quarry/kube";
import { requestResolution, waitFor } from "@quarry/requester";

export interface ResolveOptions {
  resolverType: string;
  params: { name: string; value: string }[];
  namespace: string;
  timeoutMs: number;
}

type Write = (s: string) => void;

export async function runResolve(
  client: KubeClient,
  opts: ResolveOptions,
  out: Write,
  err: Write,
): Promise<number> {
  const rr = await requestResolution(client, {
    namespace: opts.namespace,
    resolverType: opts.resolverType,
    params: opts.params,
    baseName: `quarry-cli-${Date.now()}-${randomBytes(3).toString("hex")}`,
  });
  const name = rr.metadata.name!;
  const stopSpinner = spinner(`resolving ${opts.namespace}/${name} with ${opts.resolverType}`, err);
  const abort = new AbortController();
  const onInterrupt = () => abort.abort(new Error("interrupted"));
  process.once("SIGINT", onInterrupt);
  try {
    const outcome = await waitFor(client, opts.namespace, name, {
      signal: abort.signal,
      timeoutMs: opts.timeoutMs,
    });
    stopSpinner();
    if (outcome.state === "failed") {
      err(
        `${outcome.reason}${outcome.quarryReason ? ` (${outcome.quarryReason})` : ""}: ${outcome.message}\n`,
      );
      return 1;
    }
    const data = Buffer.from(outcome.data).toString("utf8");
    out(data);
    // stdout stays byte for byte what was resolved (a bundle's object is JSON with no final
    // newline); the line break goes to stderr so a terminal does not run it into "# refSource"
    if (data !== "" && !data.endsWith("\n")) err("\n");
    if (outcome.refSource) {
      const digest = Object.entries(outcome.refSource.digest)
        .map(([alg, hex]) => `${alg}:${hex}`)
        .join(", ");
      err(
        `# refSource: ${outcome.refSource.uri} ${digest}${outcome.refSource.entryPoint ? ` ${outcome.refSource.entryPoint}` : ""}\n`,
      );
    }
    err(`# request: ${opts.namespace}/${name}\n`);
    return 0;
  } finally {
    stopSpinner();
    process.off("SIGINT", onInterrupt);
  }
}

/** A spinner on stderr when it is a terminal; a single line otherwise. */
function spinner(text: string, err: Write): () => void {
  if (!process.stderr.isTTY) {
    err(`${text} ...\n`);
    return () => {};
  }
  const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
  let i = 0;
  const timer = setInterval(() => err(`\r${frames[i++ % frames.length]} ${text}`), 80);
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    err("\r\x1b[K");
  };
}
