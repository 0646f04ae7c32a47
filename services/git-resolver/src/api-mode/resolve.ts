// API mode's I/O: the token chosen (token-choice.ts) and read, then through the forge's API the
// ref → commit first, the file at that commit, and the clone URL; so refSource pins the commit
// the file was read at, even when the branch moves meanwhile.
import {
  checkCredentialBinding,
  type EgressDispatchers,
  effectiveEgress,
  forbidden,
  mayCarryCredential,
  proxyFor,
  ResolutionError,
  type ResolveContext,
  type Resolved,
  redactUrl,
} from "@quarry/resolver-sdk";
import type { GitConfig, RepoSettings } from "../config.ts";
import { checkPolicy } from "../policy/allow-lists.ts";
import type { SecretReader } from "../policy/secrets.ts";
import { forgeHttp } from "./forge-http.ts";
import { ForgeAnswerError } from "./forges/forge.ts";
import { FORGES } from "./forges/index.ts";
import type { ApiRequest } from "./params.ts";
import { chooseToken } from "./token-choice.ts";

export const ANNOTATION_ORG = "resolution.tekton.dev/org";
export const ANNOTATION_REPO = "resolution.tekton.dev/repo";

export interface ApiModeDeps {
  readSecret: SecretReader;
  /** Where the operator's token Secret is when api-token-secret-namespace is unset. */
  systemNamespace: string;
  dispatchers: EgressDispatchers;
}

export async function resolveApi(
  req: ApiRequest,
  settings: RepoSettings,
  config: GitConfig,
  ctx: ResolveContext,
  deps: ApiModeDeps,
): Promise<Resolved> {
  try {
    checkPolicy({ url: req.repoUrl, revisionText: req.revisionText }, config, ctx.namespace);
  } catch (err) {
    // the allow-lists speak of "url"; here the URL is made of serverURL, org and repo
    if (err instanceof ResolutionError && err.message.startsWith(`param "url"`))
      throw new ResolutionError(
        err.reason,
        err.message.replace(`param "url"`, `params "serverURL", "org", "repo"`),
      );
    throw err;
  }
  const forge = FORGES[req.scmType];
  const apiBase = forge.apiBase(req.serverUrl);
  const egress = { ...effectiveEgress(settings), blockedNetworks: config.blockedNetworks };
  const choice = chooseToken(req, settings.api);
  if (choice.kind === "refuse") throw forbidden(choice.message);

  let token: string | undefined;
  let mayCarry: ((url: URL) => void) | undefined;
  const tokenParam = choice.kind === "request" ? "token" : "serverURL";
  if (choice.kind !== "anonymous") {
    if (!mayCarryCredential(apiBase, config.insecureHosts))
      throw forbidden(
        `param "${tokenParam}": refusing to send an API token to ${apiBase} over plain http: use https, or list the host in insecure-hosts in git-resolver-config`,
      );
    const proxy = proxyFor(apiBase, egress);
    if (proxy && apiBase.startsWith("http:"))
      throw forbidden(
        `param "${tokenParam}": refusing to send an API token to ${apiBase} over plain http through proxy ${redactUrl(proxy)}: use https, or list the host in no-proxy`,
      );
  }
  if (choice.kind === "request") {
    const { secret, key } = choice;
    const refuse = (url: string, problem: string) => {
      ctx.log.warn({ secret: `${ctx.namespace}/${secret}`, key, url, problem }, "API token refused");
      return forbidden(
        `param "token": Secret ${ctx.namespace}/${secret} key ${JSON.stringify(key)} cannot be used as an API token for ${apiBase}: it is missing, empty or unreadable by the git resolver, or not bound to this URL (the resolver's log says which)`,
      );
    };
    const read = await deps.readSecret(ctx.namespace, secret, key, ctx.signal);
    if ("problem" in read) throw refuse(apiBase, read.problem);
    const meta = { namespace: ctx.namespace, name: secret, annotations: read.annotations };
    mayCarry = (url) => {
      const binding = checkCredentialBinding(meta, url.href, config.credentialBindings);
      if (!binding.allowed) throw refuse(url.href, binding.detail);
    };
    mayCarry(new URL(`${apiBase}/`));
    token = read.value;
  } else if (choice.kind === "operator") {
    const namespace = choice.namespace ?? deps.systemNamespace;
    const read = await deps.readSecret(namespace, choice.secret, choice.key, ctx.signal);
    if ("problem" in read) {
      ctx.log.warn(
        { secret: `${namespace}/${choice.secret}`, key: choice.key, problem: read.problem },
        "API token unusable",
      );
      throw new ResolutionError(
        "SourceUnavailable",
        `the git resolver's API token (api-token-secret-name in git-resolver-config) cannot be read; the resolver's log says why`,
      );
    }
    token = read.value;
  }

  const http = forgeHttp({
    egress,
    dispatchers: deps.dispatchers,
    signal: ctx.signal,
    auth: token === undefined ? undefined : forge.authHeader(token),
    mayCarry,
    server: req.serverUrl,
  });
  const client = forge.open(apiBase, req.org, req.repo, http);
  try {
    const commit =
      req.revision.kind === "commit" ? req.revision.sha : await client.commitOf(req.revisionText);
    ctx.span.setAttribute("quarry.git.commit", commit);
    const file = await client.readFile(commit, req.path);
    const cloneUrl = await client.cloneUrl();
    return apiResolved(req, commit, file.data, file.path, cloneUrl);
  } catch (err) {
    if (err instanceof ForgeAnswerError)
      throw new ResolutionError("SourceUnavailable", err.message, { cause: err });
    throw err;
  }
}

/** Tekton's annotations and refSource for API mode: the clone URL, the commit read, the path. */
export function apiResolved(
  req: ApiRequest,
  commit: string,
  data: Uint8Array,
  path: string,
  cloneUrl: string,
): Resolved {
  return {
    data,
    annotations: {
      "resolution.tekton.dev/url": cloneUrl,
      "resolution.tekton.dev/revision": commit,
      "resolution.tekton.dev/path": path,
      "resolution.tekton.dev/content-type": "application/x-yaml",
      [ANNOTATION_ORG]: req.org,
      [ANNOTATION_REPO]: req.repo,
    },
    refSource: {
      uri: `git+${cloneUrl}`,
      digest: { [commit.length === 64 ? "sha256" : "sha1"]: commit },
      entryPoint: path,
    },
  };
}
