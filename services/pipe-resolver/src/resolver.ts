// PipeResolver: `pipe` requests, level-triggered. Each call of resolve()
// looks at the request and what it owns and takes the next step, so a pod that
// runs for minutes never holds a worker:
//
//   load the Pipe and its strategy (or the request's strategy and files) and
//   check them: KEP-17's rules, then what the strategy and Pipe allow (the
//   namespace, a request's own files, output kinds, fixed params:
//   strategy-policy.ts) and the operator's pod policy (pod-policy.ts); build
//   the pod (deterministic: the same request always gets the same pod, by name)
//   → the receipt says every output is stored: delete the pod, answer
//   → no pod: create it (409: it is already there), pending
//   → pod not ready: pending (woken by its events, or at the pending-timeout),
//     or failed (image pull, crash loop, config error, deadline): the pod is
//     deleted and the request fails naming the pod and its last state
//   → ready: copy every file out (exec tar; over 1 MiB refused before copying),
//     claim the outputs in the receipt, create each ConfigMap/Secret (or verify
//     the one already there), mark the receipt stored, delete the pod, answer
//     with status.data (YAML {key, kind, name, sha256} per entry).
//
// Nothing here puts a file's content anywhere but the output's data: messages,
// logs and spans name pods, paths, keys, sizes and line numbers only.
import { ANNOTATION_CONTENT_TYPE, type OwnerReference, PIPE_KIND, type Pod, QuarryReason } from "@quarry/api";
import {
  configMaps,
  errorMessage,
  isApiError,
  type KubeObject,
  type ResourceType,
  secrets,
} from "@quarry/kube";
import {
  type JobResolver,
  type Params,
  type Pending,
  pending,
  ResolutionError,
  type ResolveContext,
  type Resolved,
  type ResolverConfig,
} from "@quarry/resolver-sdk";
import { type PipeConfig, parsePipeConfig, pipeConfig } from "./config.ts";
import type { PodFileReader, PodRef } from "./copy.ts";
import type { DigestKeySource } from "./digest.ts";
import { type FileToCopy, MAX_PIPE_FILE_BYTES } from "./files.ts";
import { validateParams } from "./generated/params-validator.js";
import { podName, type RequestIdentity } from "./names.ts";
import {
  type ConfigMap,
  isOwnOutput,
  outputData,
  outputName,
  outputObject,
  outputOwner,
  type PipeOutput,
  type PipeResult,
  pipeResult,
  statusData,
} from "./objects.ts";
import { pipeParamsSchema } from "./params-schema.ts";
import { buildPod } from "./pod.ts";
import { checkPodPolicy, podPolicyMessage } from "./pod-policy.ts";
import { type PodLike, podProgress } from "./pod-state.ts";
import {
  type Receipt,
  type ReceiptObject,
  readReceipt,
  receiptData,
  receiptName,
  receiptObject,
  recorded,
} from "./receipt.ts";
import { mergeParams, readRequest } from "./request.ts";
import type { ObjectLookup } from "./sources.ts";
import { checkFixedParams, checkInlineFiles, checkNamespace, checkOutputKinds } from "./strategy-policy.ts";
import {
  type CheckedPipe,
  type CheckedStrategy,
  checkFiles,
  notFound,
  type PipeFailure,
  validatePipe,
  validateStrategy,
  WAIT_CONTAINER_NAME,
} from "./validate.ts";

export const pods: ResourceType = { group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true };

/** Narrows the pod informer to pipe pods (every pipe pod carries both). */
export const POD_SELECTOR = "app.kubernetes.io/managed-by=quarry,quarry.dev/pipe";

/** The ClusterRole a namespace binds so the resolver may make pipe pods and outputs there. */
export const NAMESPACE_ROLE = "quarry-pipe-resolver-namespace";

/** How often a step waiting for an old pod to go looks again (its deletion event usually comes first). */
const DELETING_RECHECK_MS = 5_000;

export interface PipeResolverOptions {
  lookup: ObjectLookup;
  files: PodFileReader;
  /** The key of Secret outputs' digests (digest.ts); read only when a pipe stores a Secret. */
  digestKey: DigestKeySource;
  /** Clock for the pending-timeout (tests fix it). */
  now?: () => number;
  /** The resolver's own ServiceAccount: a pipe pod may never run as it. */
  self?: { namespace: string; serviceAccount: string };
}

type PodObject = Pod & PodLike & KubeObject;

interface Prepared {
  request: RequestIdentity;
  pipeName: string;
  strategy: CheckedStrategy;
  files: FileToCopy[];
  pod: Pod;
  podName: string;
  /** Who owns the outputs: the request's controller owner, else the request. */
  owner: OwnerReference;
}

const q = (s: string) => JSON.stringify(s);

function fail(f: PipeFailure): never {
  throw new ResolutionError(f.reason, f.message);
}

function forbidden(verb: string, resource: string, namespace: string): ResolutionError {
  return new ResolutionError(
    QuarryReason.Forbidden,
    `the pipe resolver may not ${verb} ${resource} in namespace ${q(namespace)} (RBAC): a namespace that uses pipes binds ClusterRole ${NAMESPACE_ROLE} to the resolver's ServiceAccount (charts/pipe-resolver/rbac.yaml, pipeNamespaceRules)`,
  );
}

function controlledBy(obj: KubeObject, uid: string): boolean {
  return (obj.metadata.ownerReferences ?? []).some((o) => o.controller === true && o.uid === uid);
}

function sameData(a: Record<string, string> | undefined, b: Record<string, string>): boolean {
  const ak = Object.keys(a ?? {}).sort();
  const bk = Object.keys(b).sort();
  return ak.length === bk.length && ak.every((k, i) => k === bk[i] && a?.[k] === b[k]);
}

export class PipeResolver implements JobResolver {
  readonly type = "pipe";
  readonly paramsSchema = pipeParamsSchema;
  readonly compiledParams = validateParams;
  /** status.data is a list of stored objects, not a Tekton resource. */
  readonly checksKind = false;
  /** The answer names objects made for this request: never cached nor shared. */
  readonly perRequest = true;
  /**
   * Pipe pods, watched per request namespace: the resolver may read pods only where a namespace
   * opted in (pipeNamespaceRules), never cluster-wide.
   */
  readonly watches = [{ resource: pods, labelSelector: POD_SELECTOR, perNamespace: true }];
  private readonly opts: PipeResolverOptions;
  private readonly now: () => number;

  constructor(opts: PipeResolverOptions) {
    this.opts = opts;
    this.now = opts.now ?? Date.now;
  }

  validateConfig(config: ResolverConfig): void {
    parsePipeConfig(config);
  }

  async resolve(params: Params, ctx: ResolveContext): Promise<Resolved | Pending> {
    const config = pipeConfig(ctx.config);
    const name = podName({ namespace: ctx.namespace, name: ctx.name, uid: ctx.request.metadata.uid ?? "" });
    ctx.span.setAttribute("quarry.pipe.pod", name);
    const seen = { pod: this.cachedPod(ctx, name) !== undefined };
    try {
      const p = await this.prepare(params, ctx, config);
      return await this.step(p, ctx, config, seen);
    } catch (err) {
      // a failed request keeps no pod running (best effort: the request owns it anyway)
      if (err instanceof ResolutionError && seen.pod) await this.deletePod(ctx, name).catch(() => undefined);
      throw err;
    }
  }

  private cachedPod(ctx: ResolveContext, name: string): PodObject | undefined {
    return ctx.children<PodObject>(pods).find((x) => x.metadata.name === name);
  }

  private async step(
    p: Prepared,
    ctx: ResolveContext,
    config: PipeConfig,
    seen: { pod: boolean },
  ): Promise<Resolved | Pending> {
    const receipt = await this.receipt(ctx, p);
    if (receipt?.state === "stored") {
      await this.deletePod(ctx, p.podName);
      return answer(receipt.results);
    }

    const pod = this.cachedPod(ctx, p.podName) ?? (await this.ensurePod(ctx, p));
    seen.pod = true;
    const progress = podProgress(pod, p.strategy.initContainer.name, this.now(), config.pendingTimeoutMs);
    switch (progress.kind) {
      case "failed":
        throw new ResolutionError(progress.reason, progress.message);
      case "deleting":
        return pending({ message: progress.message, wakeAfterMs: DELETING_RECHECK_MS });
      case "waiting":
        return pending({ message: progress.message, wakeAfterMs: progress.wakeAfterMs });
      case "ready":
        break;
    }

    const { outputs, results } = await this.copy(ctx, p);
    let state = receipt;
    for (const [i, out] of outputs.entries()) {
      const result = results[i]!;
      const known = recorded(state, result);
      if (known?.ok === false)
        throw new ResolutionError(QuarryReason.OutputConflict, `${known.message}; nothing was overwritten`);
      if (known?.ok) continue;
      await this.store(ctx, out);
      state = await this.record(ctx, p, state, result, results);
    }
    await this.writeReceipt(ctx, p, state, { state: "stored", results });
    await this.deletePod(ctx, p.podName);
    ctx.log.info(
      { pod: p.podName, outputs: results.map((r) => `${r.kind}/${r.name}`) },
      "pipe outputs stored, pod deleted",
    );
    return answer(results);
  }

  /** Adds `result` to the receipt (in pipe order), creating the receipt on the first output. */
  private async record(
    ctx: ResolveContext,
    p: Prepared,
    receipt: Receipt | undefined,
    result: PipeResult,
    order: readonly PipeResult[],
  ): Promise<Receipt> {
    const done = [...(receipt?.results ?? []), result];
    const rank = (r: PipeResult) => order.findIndex((o) => o.kind === r.kind && o.name === r.name);
    const next: Receipt = { state: "storing", results: done.sort((a, b) => rank(a) - rank(b)) };
    await this.writeReceipt(ctx, p, receipt, next);
    return next;
  }

  /** Reads the request and its Pipe and strategy, checks them, builds the pod. No writes. */
  private async prepare(params: Params, ctx: ResolveContext, config: PipeConfig): Promise<Prepared> {
    const { namespace } = ctx;
    const read = readRequest(Object.entries(params).map(([name, value]) => ({ name, value })));
    if (!read.ok) fail(read);

    let pipe: CheckedPipe;
    let field: string;
    let subject: string;
    if ("pipe" in read.source) {
      const name = read.source.pipe;
      const obj = await this.opts.lookup(PIPE_KIND, namespace, name, ctx.signal);
      if (!obj) fail(notFound(PIPE_KIND, name, namespace));
      const checked = validatePipe(obj);
      if (!checked.ok) fail(checked);
      pipe = checked.pipe;
      field = "spec.pipe";
      subject = `Pipe ${q(name)}`;
    } else {
      pipe = read.source.inline;
      field = 'param "files"';
      subject = "request";
    }

    const ref = pipe.strategy;
    const strategyObj = await this.opts.lookup(ref.kind, namespace, ref.name, ctx.signal);
    if (!strategyObj) fail(notFound(ref.kind, ref.name, namespace));
    const checkedStrategy = validateStrategy(strategyObj, ref.kind);
    if (!checkedStrategy.ok) fail(checkedStrategy);
    const strategy = checkedStrategy.strategy;
    const refused = (f: PipeFailure | undefined) => {
      if (f) fail(f);
    };
    refused(checkNamespace(strategy, namespace));
    if ("inline" in read.source) refused(checkInlineFiles(strategy));
    const self = this.opts.self;
    const account = strategy.pod.serviceAccountName ?? strategy.pod.serviceAccount;
    if (self && namespace === self.namespace && account === self.serviceAccount)
      fail({
        ok: false,
        reason: QuarryReason.InvalidStrategy,
        message: `${ref.kind} ${q(ref.name)}: spec.pod may not run as the pipe resolver's own ServiceAccount ${q(self.serviceAccount)}`,
      });
    // before the pod exists: a refused pod is never made, so it never runs
    const violations = checkPodPolicy(strategy.pod, config.podPolicy, namespace);
    if (violations.length > 0)
      fail({
        ok: false,
        reason: QuarryReason.Forbidden,
        message: podPolicyMessage(`${ref.kind} ${q(ref.name)}`, violations),
      });

    const files = checkFiles(pipe, strategy, field, subject);
    if (!files.ok) fail(files);
    refused(checkOutputKinds(pipe, strategy, field, subject));
    refused(checkFixedParams(pipe, read.params, subject));

    const request: RequestIdentity = { namespace, name: ctx.name, uid: ctx.request.metadata.uid ?? "" };
    const built = buildPod({
      request,
      strategy,
      pipeName: pipe.name,
      params: mergeParams(pipe.params, read.params),
      podDefaults: config.podDefaults,
    });
    if (!built.ok) fail(built);
    return {
      request,
      pipeName: pipe.name,
      strategy,
      files: files.files,
      pod: built.pod,
      podName: built.pod.metadata.name ?? "",
      owner: outputOwner(ctx.request),
    };
  }

  /** This request's receipt, or undefined; a ConfigMap of that name that is not its receipt is a conflict. */
  private async receipt(ctx: ResolveContext, p: Prepared): Promise<Receipt | undefined> {
    const name = receiptName(p.request);
    let obj: ReceiptObject;
    try {
      obj = await ctx.client.get<ReceiptObject>(configMaps, ctx.namespace, name, ctx.signal);
    } catch (err) {
      if (isApiError(err, 404)) return undefined;
      if (isApiError(err, 403)) throw forbidden("get", "configmaps", ctx.namespace);
      throw err;
    }
    const read = readReceipt(obj, p.request.uid);
    if (!read.ok) throw new ResolutionError(QuarryReason.OutputConflict, read.message);
    return read.receipt;
  }

  /** Creates the receipt (none yet) or replaces its data (merge patch of data only). */
  private async writeReceipt(
    ctx: ResolveContext,
    p: Prepared,
    current: Receipt | undefined,
    next: Receipt,
  ): Promise<void> {
    try {
      if (current === undefined)
        await ctx.client.create(configMaps, receiptObject(p.request, p.pipeName, ctx.ownerReference, next));
      else
        await ctx.client.mergePatch(configMaps, ctx.namespace, receiptName(p.request), {
          data: receiptData(next),
        });
    } catch (err) {
      if (isApiError(err, 403))
        throw forbidden(current === undefined ? "create" : "patch", "configmaps", ctx.namespace);
      // 409 on create: written by a step this one did not see; the next step reads it
      throw err;
    }
  }

  /** Creates the pod; on 409 reads the one there, which must be this request's. */
  private async ensurePod(ctx: ResolveContext, p: Prepared): Promise<PodObject> {
    try {
      const created = await ctx.client.create<PodObject>(pods, p.pod as PodObject);
      ctx.log.info({ pod: p.podName }, "pipe pod created");
      // the copy comes once the pod's init container is done: ready its connection meanwhile
      this.opts.files.prepare?.();
      return created;
    } catch (err) {
      if (isApiError(err, 403)) throw forbidden("create", "pods", ctx.namespace);
      if (isApiError(err, 422) || isApiError(err, 400))
        throw new ResolutionError(
          QuarryReason.InvalidStrategy,
          `${p.strategy.kind} ${q(p.strategy.name)}: the apiserver refused the pipe pod: ${errorMessage(err).slice(0, 600)}`,
        );
      if (!isApiError(err, 409)) throw err;
    }
    const existing = await ctx.client.get<PodObject>(pods, ctx.namespace, p.podName, ctx.signal);
    if (!controlledBy(existing, p.request.uid))
      throw new ResolutionError(
        QuarryReason.OutputConflict,
        `pod ${q(p.podName)} exists in namespace ${q(ctx.namespace)} and is not this request's pipe pod`,
      );
    return existing;
  }

  private async deletePod(ctx: ResolveContext, name: string): Promise<void> {
    try {
      await ctx.client.delete(pods, ctx.namespace, name);
    } catch (err) {
      if (isApiError(err, 404)) return;
      if (isApiError(err, 403)) throw forbidden("delete", "pods", ctx.namespace);
      throw err;
    }
  }

  /** Every file, read and turned into its output; nothing is written until all are read. */
  private async copy(
    ctx: ResolveContext,
    p: Prepared,
  ): Promise<{ outputs: PipeOutput[]; results: PipeResult[] }> {
    const target: PodRef = { namespace: ctx.namespace, pod: p.podName, container: WAIT_CONTAINER_NAME };
    const outputs: PipeOutput[] = [];
    const results: PipeResult[] = [];
    const digestKey = p.files.some((f) => f.kind === "Secret")
      ? await this.opts.digestKey(ctx.signal)
      : undefined;
    for (const file of p.files) {
      const at = `${file.format} ${q(file.path)} (key ${q(file.key)})`;
      const read = await this.opts.files.read(target, file.path, {
        maxBytes: MAX_PIPE_FILE_BYTES,
        signal: ctx.signal,
      });
      if (!read.ok) {
        const inPod = `in pipe pod ${q(`${ctx.namespace}/${p.podName}`)}`;
        switch (read.problem) {
          case "missing":
            throw new ResolutionError(
              QuarryReason.NotFound,
              `${at} does not exist ${inPod}: the init container did not write it`,
            );
          case "tooLarge":
            throw new ResolutionError(
              QuarryReason.TooLarge,
              `${at} has ${read.size} bytes; at most ${MAX_PIPE_FILE_BYTES} (1 MiB) may be piped, so it was not copied`,
            );
          case "notFile":
            throw new ResolutionError(
              QuarryReason.InvalidPipe,
              `${at} is a ${read.type} ${inPod}, not a regular file`,
            );
          case "failed":
            throw new ResolutionError(
              QuarryReason.CopyFailed,
              `${at} could not be read ${inPod}: ${read.detail}`,
            );
        }
      }
      const data = outputData(file, read.bytes);
      if (!data.ok) fail(data);
      const out = outputObject({
        namespace: ctx.namespace,
        file,
        pipeName: p.pipeName,
        requestName: p.request.name,
        owner: p.owner,
        data: data.data,
      });
      outputs.push(out);
      results.push(pipeResult(file, outputName(p.owner, p.pipeName, file.key), read.bytes, digestKey));
    }
    return { outputs, results };
  }

  /**
   * Creates one output, or verifies the one already there: a ConfigMap by reading it (Quarry's, for
   * this pipe, key and owner, with the same data). A Secret that exists and is not in the receipt is
   * never taken as the request's own: the resolver may not read Secrets. Nothing is overwritten.
   */
  private async store(ctx: ResolveContext, out: PipeOutput): Promise<void> {
    const name = out.metadata.name ?? "";
    const rt = out.kind === "Secret" ? secrets : configMaps;
    try {
      await ctx.client.create(rt, out);
      return;
    } catch (err) {
      if (isApiError(err, 403)) throw forbidden("create", rt.plural, ctx.namespace);
      if (!isApiError(err, 409)) throw err;
    }
    const taken = (why: string) =>
      new ResolutionError(
        QuarryReason.OutputConflict,
        `${out.kind} ${q(name)} already exists in namespace ${q(ctx.namespace)} and ${why}; nothing was overwritten`,
      );
    if (out.kind === "Secret")
      throw taken(
        "the pipe resolver may not read Secrets, so it cannot tell whether it is this pipe's: delete it (or give the pipe entry another key) and run again",
      );
    const existing = await ctx.client.get<ConfigMap & { data?: Record<string, string> }>(
      configMaps,
      ctx.namespace,
      name,
      ctx.signal,
    );
    if (!isOwnOutput(existing, out)) throw taken("is not this pipe's output for the same key and owner");
    if (Object.keys(existing.data ?? {}).length > 0 || !sameData(existing.binaryData, out.binaryData))
      throw taken("holds other data");
  }
}

function answer(results: readonly PipeResult[]): Resolved {
  return {
    data: new TextEncoder().encode(statusData(results)),
    annotations: { [ANNOTATION_CONTENT_TYPE]: "application/x-yaml" },
  };
}
