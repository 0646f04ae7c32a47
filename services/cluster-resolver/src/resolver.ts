// ClusterResolver: Tasks, Pipelines and StepActions from this cluster,
// served from informer caches (no API call per request).
import type { Informer, KubeObject } from "@quarry/kube";
import {
  forbidden,
  notFound,
  type Params,
  ResolutionError,
  type ResolveContext,
  type Resolved,
  type Resolver,
  type ResolverConfig,
} from "@quarry/resolver-sdk";
import { clusterConfigKeys, clusterPolicy, namespaceVerdict } from "./config.ts";
import { validateParams } from "./generated/params-validator.js";
import { CLUSTER_KINDS, type ClusterKind } from "./kinds.ts";
import { clusterParamsSchema } from "./params.ts";
import { renderObject } from "./render.ts";

export interface ServedKind {
  informer: Informer<KubeObject>;
  apiVersion: string;
  plural: string;
  /**
   * Reads one object from the API. Used only on a cache miss, so an object
   * created an instant before the request (not yet seen by the watch) is not
   * reported missing; hits never call the API.
   */
  read(namespace: string, name: string, signal: AbortSignal): Promise<KubeObject | undefined>;
}

export class ClusterResolver implements Resolver {
  readonly type = "cluster";
  readonly aliases = ["in-cluster"];
  readonly paramsSchema = clusterParamsSchema;
  readonly compiledParams = validateParams;
  readonly configKeys = clusterConfigKeys;
  private readonly served: Partial<Record<ClusterKind, ServedKind>>;

  constructor(served: Partial<Record<ClusterKind, ServedKind>>) {
    this.served = served;
  }

  validateConfig(config: ResolverConfig): void {
    clusterPolicy(config);
  }

  async resolve(params: Params, ctx: ResolveContext): Promise<Resolved> {
    const policy = clusterPolicy(ctx.config);
    // an empty param is an unset one, as in Tekton (a pipeline param whose default is "")
    const kind = String(params.kind || policy.defaultKind).toLowerCase();
    if (!(CLUSTER_KINDS as readonly string[]).includes(kind)) {
      throw new ResolutionError(
        "InvalidParams",
        `param "kind" must be one of ${CLUSTER_KINDS.join(", ")}, got "${String(params.kind)}"`,
      );
    }
    const name = String(params.name);
    const namespace = String(params.namespace || policy.defaultNamespace || ctx.namespace);
    const verdict = namespaceVerdict(namespace, ctx.namespace, policy);
    if (!verdict.allowed) {
      // Tekton's condition message, word for word
      throw forbidden(`invalid resource request "${ctx.namespace}/${ctx.name}": ${verdict.message}`);
    }
    const served = this.served[kind as ClusterKind];
    if (!served) {
      throw new ResolutionError("UnsupportedKind", `param "kind": this cluster does not serve ${kind}s`);
    }
    const obj = served.informer.get(namespace, name) ?? (await served.read(namespace, name, ctx.signal));
    if (!obj) throw notFound(`${kind} ${namespace}/${name} not found`);
    const { bytes, sha256 } = renderObject(obj as KubeObject & Record<string, unknown>);
    return {
      data: bytes,
      annotations: {
        "resolution.tekton.dev/name": name,
        "resolution.tekton.dev/namespace": namespace,
      },
      refSource: {
        // as Tekton's cluster resolver writes it (v1.15.1): the lower-case singular kind, not the
        // resource's plural, so provenance consumers match both resolvers' URIs alike
        uri: `/apis/${served.apiVersion}/namespaces/${namespace}/${kind}/${name}@${obj.metadata.uid}`,
        digest: { sha256 },
      },
    };
  }
}
