// A pipe e2e scenario: the pipe resolver as its real process under its
// shipped RBAC plus the namespace's opt-in (pipeNamespaceRules), and the
// lifecycle controller with a global timeout a pipe pod fits in. With `node`,
// pipe-resolver-config points pipe pods at the runner's node (the scenario
// file must carry `// quarry-e2e: needs-node`), as pipe-resolve does; without
// it no pod can run, for scenarios whose requests fail before any pod.
import { createHash, createHmac } from "node:crypto";
import type {
  Pipe,
  PipeEntry,
  PipeStrategy,
  PipeStrategySpec,
  PodSpec,
  ResolutionRequest,
} from "@quarry/api";
import { grantOptInRules } from "@quarry/devcluster/opt-in-rbac";
import type { RunningService } from "@quarry/devcluster/service";
import { isApiError, type KubeObject, type ResourceType, secrets } from "@quarry/kube";
import yaml from "js-yaml";
import { type Pod, pods, type SharedNode, sharedNode } from "./node.ts";
import {
  createRequest,
  dataOf,
  newRequest,
  resolvedOk,
  type Scenario,
  setConfig,
  succeeded,
  useScenario,
} from "./scenario.ts";

export const PIPE_LABELS = { "resolution.tekton.dev/type": "pipe" };

export interface PipeScenario {
  scn: Scenario;
  /** Undefined unless the scenario asked for the node. */
  node: SharedNode | undefined;
  /** The resolver started in `before` (a test that kills it starts its own). */
  resolver: RunningService;
}

export interface PipeScenarioOptions {
  /** Run pipe pods on the runner's test node. */
  node: boolean;
  /** More pipe-resolver-config keys (over the node's). */
  config?: Record<string, string>;
  /** Objects the tests read, made before the resolver starts. */
  setup?: (scn: Scenario, node: SharedNode | undefined) => Promise<void>;
}

export function usePipeScenario(prefix: string, opts: PipeScenarioOptions): () => PipeScenario {
  let state: PipeScenario | undefined;
  let node: SharedNode | undefined;
  const scenario = useScenario(prefix, {
    start: ["lifecycle-controller"],
    // a pipe request lives longer than the default 1m global timeout allows
    lifecycleConfig: { "default-maximum-resolution-timeout": "5m" },
    setup: async (scn) => {
      if (opts.node) node = await sharedNode();
      await setConfig(scn, "pipe-resolver-config", {
        ...(node ? nodeConfig(node) : {}),
        // scriptPod's ServiceAccount: the pod policy allows only `default` unless told
        "allowed-service-accounts": PIPE_SERVICE_ACCOUNT,
        ...opts.config,
      });
      await grantOptInRules(scn, {
        service: "pipe-resolver",
        rulesKey: "pipeNamespaceRules",
        role: "quarry-pipe-resolver-namespace",
      });
      await opts.setup?.(scn, node);
      state = { scn, node, resolver: await scn.start("pipe-resolver") };
    },
  });
  return () => {
    scenario(); // throws outside a test
    if (!state) throw new Error("pipe scenario not set up");
    return state;
  };
}

/**
 * What pipe pods need on the test node (docs/testing.md, "Real node"): pipe-resolver-config keys,
 * and scriptPod's ServiceAccount allowed by the pod policy.
 */
export function nodeConfig(node: SharedNode): Record<string, string> {
  return {
    "allowed-service-accounts": PIPE_SERVICE_ACCOUNT,
    "wait-image": node.toolsImage,
    "wait-image-pull-policy": "Never",
    "host-network": "true",
    "node-name": node.name,
    tolerations: "- key: node.kubernetes.io/not-ready\n  operator: Exists\n",
  };
}

/** The ServiceAccount of scriptPod's pods (allowed by usePipeScenario's config). */
export const PIPE_SERVICE_ACCOUNT = "pipe-sa";

/** A strategy pod: one init container running `script` in `image` (the node's tools image) into an emptyDir at /out. */
export function scriptPod(image: string, script: string): PodSpec {
  return {
    serviceAccountName: PIPE_SERVICE_ACCOUNT,
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    // sleep, as the waiting container's PID 1, ignores SIGTERM
    terminationGracePeriodSeconds: 1,
    restartPolicy: "OnFailure",
    volumes: [{ name: "out", emptyDir: {} }],
    initContainers: [
      {
        name: "gen",
        image,
        imagePullPolicy: "Never",
        command: ["sh", "-c", script],
        volumeMounts: [{ name: "out", mountPath: "/out" }],
      },
    ],
  };
}

/** A strategy's say over its outputs: `paths` may be stored as ConfigMaps (any other file only as a Secret). */
export function configMapOutputs(...paths: string[]): PipeStrategySpec["outputs"] {
  return paths.map((path) => ({ path, kind: "ConfigMap" }));
}

export function pipeStrategy(
  namespace: string,
  name: string,
  pod: PodSpec,
  params: PipeStrategy["spec"]["params"] = [],
  /** outputs, allowInlineFiles */
  more: Omit<PipeStrategySpec, "params" | "pod"> = {},
): PipeStrategy {
  return {
    apiVersion: "quarry.dev/v1alpha1",
    kind: "PipeStrategy",
    metadata: { name, namespace },
    spec: { params, pod, ...more },
  };
}

export function pipeObject(
  namespace: string,
  name: string,
  strategy: Pipe["spec"]["strategy"],
  entries: PipeEntry[],
  params: Pipe["spec"]["params"] = [],
): Pipe {
  return {
    apiVersion: "quarry.dev/v1alpha1",
    kind: "Pipe",
    metadata: { name, namespace },
    spec: { strategy, params, pipe: entries },
  };
}

export async function pipeRequest(
  scn: Scenario,
  name: string,
  params: Record<string, string>,
): Promise<void> {
  await createRequest(scn.admin, newRequest(scn.namespace, name, PIPE_LABELS, params));
}

/** One line of a resolved pipe request's status.data: a ConfigMap's sha256, a Secret's hmacSha256. */
export interface PipeResult {
  key: string;
  kind: string;
  name: string;
  sha256?: string;
  hmacSha256?: string;
}

export const resultsOf = (rr: ResolutionRequest) => yaml.load(dataOf(rr)) as PipeResult[];
export const reasonOf = (rr: ResolutionRequest) => rr.status?.annotations?.["quarry.dev/reason"];
export const failed = (rr: ResolutionRequest) => succeeded(rr)?.status === "False";
export const done = (rr: ResolutionRequest) => resolvedOk(rr) || failed(rr);
export const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

/**
 * The HMAC-SHA256 of `b` under the pipe resolver's digest key (Secret pipe-resolver-digest-key in
 * its namespace, the scenario's): what a Secret output's hmacSha256 must be.
 */
export async function keyedDigest(scn: Scenario, b: Buffer): Promise<string> {
  const key = await scn.admin.get<KubeObject & { data: Record<string, string> }>(
    secrets,
    scn.namespace,
    "pipe-resolver-digest-key",
  );
  return createHmac("sha256", Buffer.from(key.data.key ?? "", "base64"))
    .update(b)
    .digest("hex");
}

/** Every pipe pod event in the namespace from now on (the resolver deletes its pods once copied). */
export function watchPipePods(scn: Scenario): { events: { type: string; pod: Pod }[]; stop: () => void } {
  const events: { type: string; pod: Pod }[] = [];
  const abort = new AbortController();
  void (async () => {
    try {
      for await (const e of scn.admin.watch<Pod>(
        pods,
        scn.namespace,
        { labelSelector: "quarry.dev/pipe" },
        abort.signal,
      ))
        events.push({ type: e.type, pod: e.object });
    } catch {
      // stopped
    }
  })();
  return { events, stop: () => abort.abort() };
}

export async function isGone(
  scn: Scenario,
  rt: ResourceType,
  namespace: string,
  name: string,
): Promise<boolean> {
  try {
    await scn.admin.get<KubeObject>(rt, namespace, name);
    return false;
  } catch (err) {
    if (isApiError(err, 404)) return true;
    throw err;
  }
}
