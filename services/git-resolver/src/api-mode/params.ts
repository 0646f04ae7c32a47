// Tekton's API-mode params (repo + org, read through a forge's REST API) and their checks. Pure:
// every refusal is an InvalidParams message naming the param. Which token goes where is
// token-choice.ts; the forges' clients are in forges/.
import { invalidParams, type Params } from "@quarry/resolver-sdk";
import type { RepoSettings } from "../config.ts";
import { classifyRevision, type Revision } from "../engine/refs/revision.ts";
import { normalisePath } from "../params.ts";

/** The forges Quarry has a client for (Tekton's docs list these three for API mode). */
export const SCM_TYPES = ["github", "gitlab", "gitea"] as const;
export type ScmType = (typeof SCM_TYPES)[number];

/** Tekton's default key in the `token` Secret. */
export const DEFAULT_API_TOKEN_KEY = "token";

export interface ApiRequest {
  scmType: ScmType;
  /** The forge as the request (serverURL) or the config (server-url) names it, or the type's public default. */
  serverUrl: string;
  /** serverURL as the request named it (normalised), when it did. */
  requestServerUrl: string | undefined;
  org: string;
  repo: string;
  revision: Revision;
  revisionText: string;
  path: string;
  /** The request's own token: a Secret in its namespace. */
  token: { secret: string; key: string } | undefined;
  /** `<serverUrl>/<org>/<repo>`: what allow-lists and messages see. */
  repoUrl: string;
}

/** Where a forge is when nobody names it (go-scm's defaults); gitea has none. */
export const PUBLIC_SERVERS: Readonly<Record<ScmType, string | undefined>> = {
  github: "https://github.com",
  gitlab: "https://gitlab.com",
  gitea: undefined,
};

/** A request in API mode names `repo` (Tekton's switch); `url` and `repo` together are refused. */
export function isApiMode(params: Params): boolean {
  return typeof params.repo === "string" && params.repo !== "";
}

function str(params: Params, name: string): string | undefined {
  const v = params[name];
  return typeof v === "string" && v !== "" ? v : undefined;
}

const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const SECRET_KEY = /^[-._a-zA-Z0-9]{1,253}$/;
/** An org may be a GitLab group path (a/b/c); each part as forges allow names. */
const ORG = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/;
const REPO = /^[A-Za-z0-9_.-]+$/;

/** Normalised http(s) server URL (no credentials, query or fragment, no trailing slash), or why not. */
export function checkServerUrl(raw: string): string | { error: string } {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return { error: `not a URL (got ${JSON.stringify(raw)})` };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    return { error: `must be an http(s) URL (got ${JSON.stringify(raw)})` };
  if (url.username || url.password) return { error: "must not contain credentials" };
  if (url.search || url.hash) return { error: "must not contain a query or fragment" };
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/** Checks API-mode params, with defaults from the config; throws InvalidParams naming the param. */
export function parseApiRequest(params: Params, settings: RepoSettings): ApiRequest {
  if (str(params, "url") !== undefined) throw invalidParams(`params "url" and "repo" cannot both be set`);
  for (const p of ["gitToken", "gitTokenKey"]) {
    if (str(params, p) !== undefined)
      throw invalidParams(`param "${p}" is for url mode; with "repo" name the token Secret in "token"`);
  }
  const repo = str(params, "repo") ?? "";
  if (!REPO.test(repo) || repo === "." || repo === "..")
    throw invalidParams(`param "repo": ${JSON.stringify(repo)} is not a repository name`);
  const org = str(params, "org") ?? settings.api.defaultOrg;
  if (org === undefined)
    throw invalidParams(`param "org" is required with "repo" (git-resolver-config sets no default-org)`);
  if (!ORG.test(org) || org.split("/").some((p) => p === "." || p === ".."))
    throw invalidParams(`param "org": ${JSON.stringify(org)} is not an organisation or group name`);

  const scmText = (str(params, "scmType") ?? settings.api.scmType ?? "github").toLowerCase();
  if (!(SCM_TYPES as readonly string[]).includes(scmText)) {
    const from = str(params, "scmType") ? `param "scmType"` : `scm-type in git-resolver-config`;
    throw invalidParams(`${from}: ${JSON.stringify(scmText)} is not supported (${SCM_TYPES.join(", ")})`);
  }
  const scmType = scmText as ScmType;

  const named = str(params, "serverURL");
  let requestServerUrl: string | undefined;
  if (named !== undefined) {
    const checked = checkServerUrl(named);
    if (typeof checked !== "string") throw invalidParams(`param "serverURL": ${checked.error}`);
    requestServerUrl = checked;
  }
  const serverUrl = requestServerUrl ?? settings.api.serverUrl ?? PUBLIC_SERVERS[scmType];
  if (serverUrl === undefined)
    throw invalidParams(
      `param "serverURL" is required for scmType ${scmType} (git-resolver-config sets no server-url)`,
    );

  const revisionText = str(params, "revision") ?? settings.defaultRevision;
  const revision = classifyRevision(revisionText);
  if ("error" in revision) throw invalidParams(`param "revision": ${revision.error}`);

  const path = normalisePath(typeof params.pathInRepo === "string" ? params.pathInRepo : "");
  if (typeof path !== "string") throw invalidParams(`param "pathInRepo": ${path.error}`);

  const secret = str(params, "token");
  const key = str(params, "tokenKey");
  if (key !== undefined && secret === undefined)
    throw invalidParams(`param "tokenKey" needs "token" (the Secret holding the token)`);
  if (secret !== undefined && !DNS_SUBDOMAIN.test(secret))
    throw invalidParams(`param "token": ${JSON.stringify(secret)} is not a valid Secret name`);
  if (key !== undefined && !SECRET_KEY.test(key))
    throw invalidParams(`param "tokenKey": ${JSON.stringify(key)} is not a valid Secret key`);
  const token = secret === undefined ? undefined : { secret, key: key ?? DEFAULT_API_TOKEN_KEY };

  return {
    scmType,
    serverUrl,
    requestServerUrl,
    org,
    repo,
    revision,
    revisionText,
    path,
    token,
    repoUrl: `${serverUrl}/${org}/${repo}`,
  };
}
