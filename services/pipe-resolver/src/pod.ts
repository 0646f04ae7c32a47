// The pipe pod for a request, built from a checked strategy: the strategy's
// pod spec with its declared params substituted into the init container's
// command, args and env values, restartPolicy OnFailure, and one container
// Quarry adds that waits (mounting the emptyDir where the init container did)
// while the resolver copies the files out. The strategy's annotations are
// propagated (SHIP-0010) except kubectl's last-applied-configuration and
// Quarry's reserved prefixes; labels are Quarry's own; the request is the
// pod's controller owner. The name is stable per request: a retry finds the
// pod it made instead of making a second one.
//
// Networking and placement are not decided here: `PodDefaults` carries what
// the deployment (or the e2e node) needs, and the strategy wins where it says
// something itself.
import {
  ANNOTATION_LAST_APPLIED,
  type Container,
  type EnvVar,
  LABEL_MANAGED_BY,
  LABEL_PIPE,
  LABEL_REQUEST,
  MANAGED_BY_QUARRY,
  type OwnerReference,
  type Param,
  type Pod,
  type PodSpec,
  RESERVED_ANNOTATION_PREFIXES,
  RESOLUTION_REQUEST_KIND,
  RESOLUTION_V1BETA1,
  resolveParams,
  substitute,
} from "@quarry/api";
import { labelValue, podName, type RequestIdentity } from "./names.ts";
import { type CheckedStrategy, type PipeFailure, WAIT_CONTAINER_NAME } from "./validate.ts";

export const DEFAULT_WAIT_IMAGE = "busybox";
/**
 * Long enough for any copy; the resolver deletes the pod once the files are stored or its deadline
 * passes. A bare `sleep` as PID 1 ignores SIGTERM, so every deleted pod would live out its grace
 * period and be killed; the shell exits at once on SIGTERM instead.
 */
export const DEFAULT_WAIT_COMMAND: readonly string[] = ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"];

/** What the deployment decides for every pipe pod (config), not the strategy's author. */
export interface PodDefaults {
  /** Image of the waiting container; it needs `sh`, `sleep` and `tar` (the files are copied with exec tar). */
  waitImage?: string;
  waitCommand?: readonly string[];
  waitImagePullPolicy?: string;
  /** The waiting container's resources (e.g. where a ResourceQuota requires them). */
  waitResources?: Record<string, unknown>;
  /** Used when the strategy does not set hostNetwork. */
  hostNetwork?: boolean;
  /** Used when the strategy does not set nodeName. */
  nodeName?: string;
  /** Added after the strategy's own tolerations. */
  tolerations?: readonly Record<string, unknown>[];
}

export interface BuildPodInput {
  request: RequestIdentity;
  strategy: CheckedStrategy;
  /** The Pipe's name (the strategy's for a request without a Pipe): the quarry.dev/pipe label. */
  pipeName: string;
  /** Values for the strategy's params: the Pipe's with the request's over them (request.ts mergeParams). */
  params: readonly Param[];
  podDefaults?: PodDefaults;
}

export type BuildPodResult = { ok: true; pod: Pod } | PipeFailure;

/** True for an annotation a strategy may pass to its pods (SHIP-0010, with Quarry's prefixes). */
export function isPropagated(key: string): boolean {
  return key !== ANNOTATION_LAST_APPLIED && !RESERVED_ANNOTATION_PREFIXES.some((p) => key.startsWith(p));
}

export function propagatedAnnotations(annotations: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(annotations).filter(([k]) => isPropagated(k)));
}

/** The request as its pods' controller owner. */
export function requestOwner(request: RequestIdentity): OwnerReference {
  return {
    apiVersion: RESOLUTION_V1BETA1,
    kind: RESOLUTION_REQUEST_KIND,
    name: request.name,
    uid: request.uid,
    controller: true,
  };
}

/**
 * The pod for a request. Fails with resolveParams' reasons (UnknownParam for a param the strategy
 * does not declare, MissingParam, InvalidParamType, …) and substitute's (InvalidParamReference);
 * messages name the strategy.
 */
export function buildPod(input: BuildPodInput): BuildPodResult {
  const { request, strategy, podDefaults: d = {} } = input;
  const subject = `${strategy.kind} ${JSON.stringify(strategy.name)}`;
  const resolved = resolveParams(strategy.params, input.params);
  if (!resolved.ok) return { ...resolved, message: `${subject}: ${resolved.message}` };

  const init = strategy.initContainer;
  const substituted = substitute(
    {
      command: init.command ?? null,
      args: init.args ?? null,
      // each value in an object of its own: an array element would take a whole array param
      env: (init.env ?? []).map((e) => ({ value: e.value ?? null })),
    },
    resolved.values,
  );
  if (!substituted.ok)
    return {
      ...substituted,
      message: `${subject}: spec.pod.initContainers[0] (command, args or env): ${substituted.message}`,
    };
  const out = substituted.value as {
    command: string[] | null;
    args: string[] | null;
    env: { value: string | null }[];
  };
  const initContainer: Container = structuredClone(init);
  if (out.command !== null) initContainer.command = out.command;
  if (out.args !== null) initContainer.args = out.args;
  if (init.env !== undefined)
    initContainer.env = init.env.map((e, i): EnvVar => {
      const value = out.env[i]?.value;
      return typeof value === "string" ? { ...structuredClone(e), value } : structuredClone(e);
    });

  const { mount } = strategy;
  const waitContainer: Container = {
    name: WAIT_CONTAINER_NAME,
    image: d.waitImage ?? DEFAULT_WAIT_IMAGE,
    command: [...(d.waitCommand ?? DEFAULT_WAIT_COMMAND)],
    volumeMounts: [
      {
        name: mount.volumeName,
        mountPath: mount.mountPath,
        ...(mount.subPath !== undefined ? { subPath: mount.subPath } : {}),
        readOnly: true,
      },
    ],
  };
  if (d.waitImagePullPolicy !== undefined) waitContainer.imagePullPolicy = d.waitImagePullPolicy;
  if (d.waitResources !== undefined) waitContainer.resources = structuredClone(d.waitResources);
  // The same user as the init container, so it can read what the init container wrote (a key file
  // is often mode 0600).
  if (init.securityContext !== undefined)
    waitContainer.securityContext = structuredClone(init.securityContext);

  const spec: PodSpec = {
    ...structuredClone(strategy.pod),
    initContainers: [initContainer],
    containers: [waitContainer],
    restartPolicy: "OnFailure",
  };
  if (spec.hostNetwork === undefined && d.hostNetwork !== undefined) spec.hostNetwork = d.hostNetwork;
  if (spec.nodeName === undefined && d.nodeName !== undefined) spec.nodeName = d.nodeName;
  if (d.tolerations !== undefined && d.tolerations.length > 0)
    spec.tolerations = [...(spec.tolerations ?? []), ...structuredClone(d.tolerations)];

  const annotations = propagatedAnnotations(strategy.annotations);
  return {
    ok: true,
    pod: {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: podName(request),
        namespace: request.namespace,
        labels: {
          [LABEL_PIPE]: labelValue(input.pipeName),
          [LABEL_REQUEST]: labelValue(request.name),
          [LABEL_MANAGED_BY]: MANAGED_BY_QUARRY,
        },
        ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
        ownerReferences: [requestOwner(request)],
      },
      spec,
    },
  };
}
