// The kube context a command talks to: --kubeconfig, else KUBECONFIG, else
// ~/.kube/config, else the in-cluster service account (--context picks a
// context other than the current one); and the namespace kubectl would use.
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { type KubeClient, RestKubeClient } from "@quarry/kube";

export interface KubeContext {
  client: KubeClient;
  /** -n, else the current context's namespace, else "default" (kubectl's order). */
  namespace: string;
}

export function kubeContext(opts: {
  kubeconfig?: string | undefined;
  /** --context: a kubeconfig context other than the current one. */
  context?: string | undefined;
  namespace?: string | undefined;
}): KubeContext {
  if (!opts.kubeconfig && !hasDefaultConfig(process.env)) {
    // the client library would otherwise fall back to http://localhost:8080 and fail obscurely
    throw new Error(
      "no kubeconfig: set KUBECONFIG or pass --kubeconfig (for a throwaway cluster: scripts/demo.sh --keep)",
    );
  }
  const client = RestKubeClient.fromEnvironment(opts.kubeconfig, opts.context);
  return { client, namespace: opts.namespace || client.namespace || "default" };
}

function hasDefaultConfig(env: NodeJS.ProcessEnv): boolean {
  return Boolean(
    env.KUBECONFIG || existsSync(join(homedir(), ".kube", "config")) || env.KUBERNETES_SERVICE_HOST,
  );
}
