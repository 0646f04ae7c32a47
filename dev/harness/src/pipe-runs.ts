// Pipe runs on the test node: the run-controller (which runs the built-in
// Pipe task) next to the pipe scenario's resolver and lifecycle controller,
// and Pipes whose init container makes a certificate, or never finishes.

import type { RunFlavour } from "@quarry/api";
import { type AnyRun, pipeStrategies, pipes, type ResolutionRequest, resolutionRequests } from "@quarry/api";
import type { KubeObject } from "@quarry/kube";
import { pods } from "./node.ts";
import {
  configMapOutputs,
  type PipeScenario,
  pipeObject,
  pipeStrategy,
  scriptPod,
  usePipeScenario,
} from "./pipe-scenario.ts";
import { runObject } from "./runs.ts";
import type { Scenario } from "./scenario.ts";

export const PIPE_REF = { apiVersion: "quarry.dev/v1alpha1", kind: "Pipe" } as const;

/** A self-signed certificate: key into a Secret, certificate into a ConfigMap. */
export const CERT_PIPE = "cert";
/** An init container that never finishes (for cancel and timeout). */
export const SLOW_PIPE = "slow";

const CERT_SCRIPT =
  "set -e; openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=$(params.cn) -keyout /out/tls.key -out /out/tls.crt 2>/dev/null";

export function usePipeRunScenario(prefix: string, config: Record<string, string> = {}): () => PipeScenario {
  return usePipeScenario(prefix, {
    node: true,
    config: { "pending-timeout": "90s", ...config },
    setup: async (scn, node) => {
      const ns = scn.namespace;
      const image = node!.toolsImage;
      await scn.admin.create(
        pipeStrategies,
        pipeStrategy(ns, "openssl", scriptPod(image, CERT_SCRIPT), [{ name: "cn" }], {
          outputs: configMapOutputs("/out/tls.crt"),
        }),
      );
      await scn.admin.create(
        pipeStrategies,
        pipeStrategy(ns, "sleeper", scriptPod(image, "sleep 600"), [], {
          outputs: configMapOutputs("/out/x"),
        }),
      );
      await scn.admin.create(
        pipes,
        pipeObject(ns, CERT_PIPE, { kind: "PipeStrategy", name: "openssl" }, [
          { file: "/out/tls.key", kind: "Secret", key: "tls-key" },
          { file: "/out/tls.crt", kind: "ConfigMap", key: "tls-crt" },
        ]),
      );
      await scn.admin.create(
        pipes,
        pipeObject(ns, SLOW_PIPE, { kind: "PipeStrategy", name: "sleeper" }, [
          { file: "/out/x", kind: "ConfigMap", key: "x" },
        ]),
      );
      await scn.start("run-controller");
    },
  });
}

/** A Pipe run of `pipe` as Tekton Pipelines would create it. */
export function pipeRun(
  flavour: RunFlavour,
  scn: Scenario,
  name: string,
  pipe: string,
  extra: { timeout?: string; retries?: number; params?: { name: string; value: string }[] } = {},
): AnyRun {
  return runObject(flavour, scn.namespace, { name, ref: { ...PIPE_REF, name: pipe }, ...extra });
}

/** The run's pipe requests (every attempt's), by the label the run-controller sets. */
export async function pipeRequestsOf(scn: Scenario, run: string): Promise<ResolutionRequest[]> {
  const list = await scn.admin.list<ResolutionRequest>(resolutionRequests, scn.namespace, {
    labelSelector: `quarry.dev/run=${run}`,
  });
  return list.items;
}

export const ownedBy = (obj: KubeObject, owner: KubeObject) =>
  (obj.metadata.ownerReferences ?? []).some((o) => o.uid === owner.metadata.uid);

/** The pipe pods of a request (the resolver labels them with the request's name). */
export async function podsOf(scn: Scenario, rr: ResolutionRequest): Promise<KubeObject[]> {
  const list = await scn.admin.list<KubeObject>(pods, scn.namespace, {
    labelSelector: `quarry.dev/request=${rr.metadata.name}`,
  });
  return list.items;
}
