// GitResolver: Tekton's `git` resolver params on top of a GitSource. It only
// decides (params, policy, credentials, annotations, error reasons); the git
// work is the source's.

import {
  checkCredentialBinding,
  configParser,
  EgressDispatchers,
  effectiveEgress,
  forbidden,
  invalidParams,
  mayCarryCredential,
  type Params,
  proxyFor,
  type ResolveContext,
  type Resolved,
  type Resolver,
  type ResolverConfig,
  redactUrl,
  runtimeTimeoutMs,
  type WaitBackoff,
} from "@quarry/resolver-sdk";
import { isApiMode, parseApiRequest } from "./api-mode/params.ts";
import { resolveApi } from "./api-mode/resolve.ts";
import {
  type GitConfig,
  gitConfigKeys,
  parseGitConfig,
  settingsFor,
  TEKTON_FETCH_TIMEOUT_MS,
} from "./config.ts";
import { classifyRevision } from "./engine/refs/revision.ts";
import type { GitAuth, GitSource, SourceRequest } from "./engine/source.ts";
import { toResolutionError } from "./errors.ts";
import { validateParams } from "./generated/params-validator.js";
import { type GitRequest, paramsSchema, parseRequest } from "./params.ts";
import { checkPolicy } from "./policy/allow-lists.ts";
import { type SecretReader, unusableTokenMessage } from "./policy/secrets.ts";

export const ANNOTATION_URL = "resolution.tekton.dev/url";
export const ANNOTATION_REVISION = "resolution.tekton.dev/revision";
export const ANNOTATION_PATH = "resolution.tekton.dev/path";
export const ANNOTATION_CONTENT_TYPE = "resolution.tekton.dev/content-type";
/** Set when pathInRepo went through a symlink: the file actually read. */
export const ANNOTATION_RESOLVED_PATH = "quarry.dev/git-resolved-path";

export interface GitResolverDeps {
  source: GitSource;
  readSecret: SecretReader;
  /** The resolver's namespace: where API mode's operator token is unless api-token-secret-namespace says. */
  systemNamespace?: string;
}

export class GitResolver implements Resolver {
  readonly type = "git";
  readonly paramsSchema = paramsSchema;
  readonly compiledParams = validateParams;
  readonly configKeys = gitConfigKeys;
  private readonly deps: GitResolverDeps;
  private readonly config = configParser(parseGitConfig);
  private readonly dispatchers = new EgressDispatchers();

  constructor(deps: GitResolverDeps) {
    this.deps = deps;
  }

  validateConfig(config: ResolverConfig): void {
    this.config(config);
  }

  /** A full commit id pins the content, so the runtime may cache it in "auto" mode. */
  isImmutable(params: Params): boolean {
    if (typeof params.revision !== "string") return false;
    const revision = classifyRevision(params.revision);
    return "kind" in revision && revision.kind === "commit";
  }

  /**
   * Tekton's fetch-timeout (the configKey's, else the plain key); unset, the runtime's
   * resolution-timeout when the ConfigMap sets it, else Tekton's default (1m).
   */
  timeout(params: Params, config: ResolverConfig): number {
    const key = typeof params.configKey === "string" ? params.configKey : undefined;
    const fetch = settingsFor(this.config(config), key)?.fetchTimeoutMs;
    if (fetch !== undefined) return fetch;
    return config["resolution-timeout"]?.trim() ? runtimeTimeoutMs(config) : TEKTON_FETCH_TIMEOUT_MS;
  }

  /**
   * Tekton's backoff-* keys, when the config sets any: the attempts of the whole resolution (clone
   * or API mode) and the delays between them.
   */
  retryBackoff(config: ResolverConfig): WaitBackoff | undefined {
    return this.config(config).backoff;
  }

  async resolve(params: Params, ctx: ResolveContext): Promise<Resolved> {
    const config = this.config(ctx.config);
    if (isApiMode(params)) {
      const configKey =
        typeof params.configKey === "string" && params.configKey ? params.configKey : undefined;
      const settings = settingsFor(config, configKey);
      if (!settings)
        throw invalidParams(`param "configKey": git-resolver-config has no keys "${configKey}.*"`);
      const api = parseApiRequest(params, settings);
      return resolveApi(api, settings, config, ctx, {
        readSecret: this.deps.readSecret,
        systemNamespace: this.deps.systemNamespace ?? "quarry-system",
        dispatchers: this.dispatchers,
      });
    }
    const req = parseRequest(params, config);
    checkPolicy(req, config, ctx.namespace);
    const egress = effectiveEgress(req.settings);
    const proxy = proxyFor(req.url, egress);
    if (req.token && !mayCarryCredential(req.url, config.insecureHosts)) {
      throw forbidden(
        `param "url": refusing to send the gitToken to ${req.url} over plain http: use https, or list the host in insecure-hosts in git-resolver-config`,
      );
    }
    if (req.token && proxy && req.url.startsWith("http:")) {
      // insecure-hosts vouches for the path to the host, not for a proxy that would read the token
      throw forbidden(
        `param "url": refusing to send the gitToken to ${req.url} over plain http through proxy ${redactUrl(proxy)}: use https, or list the host in no-proxy`,
      );
    }
    const auth = await this.auth(req, config, ctx);
    const sreq: SourceRequest = {
      auth,
      scope: JSON.stringify([ctx.namespace, req.token?.secret ?? "", req.token?.key ?? ""]),
      signal: ctx.signal,
      proxy,
      caBundle: egress.caBundle,
      blockedNetworks: config.blockedNetworks,
      maxRepositoryBytes: config.maxRepositoryBytes,
      maxCacheBytes: config.maxCacheBytes,
      refLookupIntervalMs: config.refLookupIntervalMs,
    };
    let commit: string | undefined;
    try {
      commit =
        req.revision.kind === "commit"
          ? req.revision.sha
          : await this.deps.source.resolveRevision(req.url, req.revision, sreq);
      ctx.span.setAttribute("quarry.git.commit", commit);
      const file = await this.deps.source.readFile(req.url, commit, req.path, sreq);
      return resolved(req, commit, file.bytes, file.resolvedPath);
    } catch (err) {
      throw toResolutionError(err, { url: req.url, commit, withToken: auth !== undefined });
    }
  }

  /**
   * The token, once its Secret is read and bound to the URL; nothing has gone to the git server
   * yet. Every way the Secret can fail (missing, unreadable, no key, empty, not bound to this
   * URL) gives the requester one message, so a request cannot probe which Secrets or keys exist;
   * the resolver's log says which it was.
   */
  private async auth(req: GitRequest, config: GitConfig, ctx: ResolveContext): Promise<GitAuth | undefined> {
    if (!req.token) return undefined;
    const { secret, key } = req.token;
    const refuse = (problem: string) => {
      ctx.log.warn({ secret: `${ctx.namespace}/${secret}`, key, url: req.url, problem }, "gitToken refused");
      return forbidden(unusableTokenMessage(ctx.namespace, secret, key, req.url));
    };
    const read = await this.deps.readSecret(ctx.namespace, secret, key, ctx.signal);
    if ("problem" in read) throw refuse(read.problem);
    const meta = { namespace: ctx.namespace, name: secret, annotations: read.annotations };
    const binding = checkCredentialBinding(meta, req.url, config.credentialBindings);
    if (!binding.allowed) throw refuse(binding.detail);
    ctx.log.debug({ secret: `${ctx.namespace}/${secret}`, url: req.url, by: binding.by }, "gitToken bound");
    return { username: req.settings.tokenUsername, token: read.value };
  }
}

/** Status for a read file: Tekton's annotations and refSource (SPDX `git+<url>`, digest by object format). */
export function resolved(req: GitRequest, commit: string, data: Uint8Array, resolvedPath: string): Resolved {
  const annotations: Record<string, string> = {
    [ANNOTATION_URL]: req.url,
    [ANNOTATION_REVISION]: commit,
    [ANNOTATION_PATH]: req.path,
    [ANNOTATION_CONTENT_TYPE]: "application/x-yaml",
  };
  if (resolvedPath !== req.path) annotations[ANNOTATION_RESOLVED_PATH] = resolvedPath;
  return {
    data,
    annotations,
    refSource: {
      uri: `git+${req.url}`,
      digest: { [commit.length === 64 ? "sha256" : "sha1"]: commit },
      entryPoint: req.path,
    },
  };
}
