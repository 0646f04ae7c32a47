// The git resolver's params (Tekton's names) and their checks. Pure: every
// refusal is an InvalidParams message that names the param; policy
// (allow-lists) is in policy/allow-lists.ts.
import { invalidParams, type Params, type ParamsSchema } from "@quarry/resolver-sdk";
import { type GitConfig, type RepoSettings, settingsFor } from "./config.ts";
import { classifyRevision, type Revision } from "./engine/refs/revision.ts";

/**
 * Length caps, so a hostile megabyte-long param is refused in microseconds
 * instead of reaching git (which took seconds per attempt and held a worker
 * the other requests waited for): URLs as browsers and forges cap them, a
 * revision as long as a ref name git accepts, a path as long as PATH_MAX.
 */
const capped = (maxLength: number) => ({ type: "string", maxLength }) as const;

export const paramsSchema: ParamsSchema = {
  type: "object",
  properties: {
    url: capped(4096),
    revision: capped(1024),
    pathInRepo: capped(4096),
    gitToken: capped(253),
    gitTokenKey: capped(253),
    configKey: capped(253),
    repo: capped(253),
    org: capped(253),
    token: capped(253),
    tokenKey: capped(253),
    scmType: capped(64),
    serverURL: capped(4096),
  },
  required: ["pathInRepo"],
  additionalProperties: false,
};

/** Params only API mode (`repo`, api-mode/params.ts) reads. */
export const API_ONLY_PARAMS = ["repo", "org", "token", "tokenKey", "scmType", "serverURL"] as const;

/** Tekton's default key in the gitToken Secret. */
export const DEFAULT_TOKEN_KEY = "token";

export interface GitRequest {
  /** Normalised http(s) URL: the cache key, and what annotations and refSource name. */
  url: string;
  revision: Revision;
  /** The revision as requested (or defaulted), for allow-lists and messages. */
  revisionText: string;
  /** Normalised path inside the repository, without a leading slash. */
  path: string;
  /** The Secret (in the request's namespace) and key holding a token for basic auth. */
  token: { secret: string; key: string } | undefined;
  configKey: string | undefined;
  settings: RepoSettings;
}

function str(params: Params, name: string): string | undefined {
  const v = params[name];
  return typeof v === "string" ? v : undefined;
}

/** Checks the params and fills defaults from the config; throws InvalidParams naming the param. */
export function parseRequest(params: Params, config: GitConfig): GitRequest {
  // with "repo" the request is in API mode (api-mode/params.ts); these mean nothing without it
  for (const p of API_ONLY_PARAMS) {
    if (str(params, p))
      throw invalidParams(`param "${p}" needs "repo" (API mode); with "url" it is not used`);
  }
  const configKey = str(params, "configKey") || undefined;
  const settings = settingsFor(config, configKey);
  if (!settings) {
    throw invalidParams(`param "configKey": git-resolver-config has no keys "${configKey}.*"`);
  }

  const rawUrl = str(params, "url") || settings.defaultUrl;
  if (rawUrl === undefined)
    throw invalidParams(`param "url" is required (git-resolver-config sets no default-url)`);
  const url = checkUrl(rawUrl);
  if ("error" in url) throw invalidParams(`param "url": ${url.error}`);

  const revisionText = str(params, "revision") || settings.defaultRevision;
  const revision = classifyRevision(revisionText);
  if ("error" in revision) throw invalidParams(`param "revision": ${revision.error}`);

  const path = normalisePath(str(params, "pathInRepo") ?? "");
  if (typeof path !== "string") throw invalidParams(`param "pathInRepo": ${path.error}`);

  const secret = str(params, "gitToken") || undefined;
  const key = str(params, "gitTokenKey") || undefined;
  if (key !== undefined && secret === undefined) {
    throw invalidParams(`param "gitTokenKey" needs "gitToken" (the Secret holding the token)`);
  }
  if (secret !== undefined && !DNS_SUBDOMAIN.test(secret)) {
    throw invalidParams(`param "gitToken": ${JSON.stringify(secret)} is not a valid Secret name`);
  }
  if (key !== undefined && !SECRET_KEY.test(key)) {
    throw invalidParams(`param "gitTokenKey": ${JSON.stringify(key)} is not a valid Secret key`);
  }
  const token = secret === undefined ? undefined : { secret, key: key ?? DEFAULT_TOKEN_KEY };
  return { url: url.url, revision, revisionText, path, token, configKey, settings };
}

const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const SECRET_KEY = /^[-._a-zA-Z0-9]{1,253}$/;

/**
 * A path inside the repository: relative to its root (a leading "/" is
 * accepted and means the root), "." and empty components dropped, ".."
 * refused anywhere, so no spelling of a path can leave the repository.
 */
export function normalisePath(raw: string): string | { error: string } {
  if (raw === "") return { error: "must not be empty" };
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(raw)) return { error: "must not contain control characters" };
  const parts = raw.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.includes("..")) return { error: `must not contain ".." (got ${JSON.stringify(raw)})` };
  if (parts.length === 0)
    return { error: `names the repository root, not a file (got ${JSON.stringify(raw)})` };
  return parts.join("/");
}

/**
 * Only http(s) URLs: file://, local paths and ssh are refused (a local path
 * would read the resolver's own disk; ssh needs keys Quarry does not manage
 * yet). Credentials in the URL are refused too: they would end up in status
 * annotations and logs; gitToken sends them instead.
 */
export function checkUrl(raw: string): { url: string } | { error: string } {
  const value = raw.trim();
  const quoted = JSON.stringify(value);
  if (value.startsWith("-")) return { error: `must not start with "-" (got ${quoted})` };
  if (/^file:/i.test(value)) return { error: `file:// URLs are not allowed (got ${quoted})` };
  if (/^(\/|\.\.?\/|~)/.test(value) || value === "." || value === "..") {
    return { error: `local paths are not allowed (got ${quoted})` };
  }
  if (/^[^/:]+@[^/:]+:/.test(value) || /^ssh:/i.test(value) || /^git\+ssh:/i.test(value)) {
    return { error: `ssh URLs are not supported, use https (got ${quoted})` };
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { error: `not a URL (got ${quoted})` };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return { error: `scheme ${url.protocol.replace(/:$/, "")} is not supported, use https (got ${quoted})` };
  }
  if (url.username !== "" || url.password !== "") {
    return { error: `must not contain credentials; put a token in a Secret and name it in "gitToken"` };
  }
  if (url.hash !== "") return { error: `must not contain a fragment (got ${quoted})` };
  if (url.hostname === "") return { error: `has no host (got ${quoted})` };
  const path = url.pathname.replace(/\/+$/, "");
  return { url: `${url.protocol}//${url.host}${path}${url.search}` };
}
