// Which URLs a credential may be sent to. A Secret is bound to URLs by its
// own annotations (Tekton's `tekton.dev/git-*` URL prefixes, which creds-init
// already reads for TaskRuns, and Quarry's `quarry.dev/credential-urls` list
// of them) or by the resolver config's `credential-bindings` (for operators
// who bind without editing Secrets). Either source suffices; a Secret bound by
// neither is never sent anywhere, so naming a URL in a request cannot carry a
// team's credential to a host of the requester's choosing. The git resolver
// binds `gitToken` with it, the http resolver `http-password-secret`. Pure.
import { ConfigError, configPattern } from "@quarry/kube";
import yaml from "js-yaml";

/** Tekton's annotation prefix on a Secret: `tekton.dev/git-<anything>: <scheme://host[:port][/path]>`. */
export const TEKTON_GIT_ANNOTATION_PREFIX = "tekton.dev/git-";
/**
 * Quarry's annotation: URL prefixes matched as Tekton's (comma or whitespace separated). Prefixes,
 * not regular expressions: whoever may edit a Secret writes them, and a pattern would run on the
 * shared resolver's event loop, where one catastrophic backtracking would stall every tenant.
 */
export const CREDENTIAL_URLS_ANNOTATION = "quarry.dev/credential-urls";
/** The resolver config key (git-resolver-config, http-resolver-config): YAML list of {namespace, secret, urls}. */
export const CREDENTIAL_BINDINGS_KEY = "credential-bindings";

/** A credential Secret as far as binding goes: where it lives and its annotations (never its data). */
export interface TokenSecretMeta {
  namespace: string;
  name: string;
  annotations: Readonly<Record<string, string>>;
}

/** One rule of `credential-bindings`: Secrets (by namespace and name, `*` for any) → URL patterns. */
export interface CredentialBinding {
  namespace: string;
  secret: string;
  urls: readonly RegExp[];
}

export type BindingDecision =
  /** `by` says which annotation or rule allowed it, for the log. */
  | { allowed: true; by: string }
  /** `detail` says what the Secret is bound to (URL prefixes, patterns, no rule), for the log only. */
  | { allowed: false; detail: string };

/** Whether the credential in `secret` may be sent to `url` (a normalised http(s) URL). */
export function checkCredentialBinding(
  secret: TokenSecretMeta,
  url: string,
  bindings: readonly CredentialBinding[],
): BindingDecision {
  const prefixes: string[] = [];
  const ignored: string[] = [];
  for (const [key, value] of Object.entries(secret.annotations)) {
    if (!key.startsWith(TEKTON_GIT_ANNOTATION_PREFIX)) continue;
    const prefix = value.trim();
    const match = matchesUrlPrefix(prefix, url);
    if (match === undefined) {
      // ssh Secrets carry a bare host here (`github.com`): it binds no http(s) URL
      ignored.push(`${key}: ${JSON.stringify(prefix)} is not an http(s) URL prefix`);
      continue;
    }
    if (match) return { allowed: true, by: `annotation ${key}` };
    prefixes.push(prefix);
  }
  const listed = secret.annotations[CREDENTIAL_URLS_ANNOTATION];
  for (const prefix of listed === undefined ? [] : listed.split(/[\s,]+/).filter((p) => p !== "")) {
    const match = matchesUrlPrefix(prefix, url);
    if (match === undefined) {
      ignored.push(`${CREDENTIAL_URLS_ANNOTATION}: ${JSON.stringify(prefix)} is not an http(s) URL prefix`);
      continue;
    }
    if (match) return { allowed: true, by: `annotation ${CREDENTIAL_URLS_ANNOTATION}` };
    prefixes.push(prefix);
  }
  let rules = 0;
  for (const [i, rule] of bindings.entries()) {
    if (!wildcardMatch(rule.namespace, secret.namespace) || !wildcardMatch(rule.secret, secret.name))
      continue;
    rules++;
    if (rule.urls.some((re) => re.test(url)))
      return { allowed: true, by: `${CREDENTIAL_BINDINGS_KEY}[${i}]` };
  }
  const parts = [
    prefixes.length > 0 ? `its URL prefixes ${prefixes.join(", ")}` : undefined,
    rules > 0 ? `${rules} ${CREDENTIAL_BINDINGS_KEY} rule(s)` : undefined,
  ].filter((p) => p !== undefined);
  const bound =
    parts.length > 0
      ? `none of ${parts.join("; ")} matches`
      : `it has no ${TEKTON_GIT_ANNOTATION_PREFIX}* or ${CREDENTIAL_URLS_ANNOTATION} annotation and no ${CREDENTIAL_BINDINGS_KEY} rule names it`;
  const skipped = ignored.length > 0 ? ` (ignored: ${ignored.join("; ")})` : "";
  return {
    allowed: false,
    detail: `Secret ${secret.namespace}/${secret.name} is not bound to ${url}: ${bound}${skipped}`,
  };
}

/**
 * Whether `url` is under `prefix` (Tekton's `tekton.dev/git-*` value): same scheme, host and port
 * exactly, and the prefix's path a whole-segment prefix of the URL's, so `https://github.com`
 * never matches `https://github.com.evil.io` nor `https://github.com/org` `/organisation`.
 * Both sides go through the WHATWG parser, so case, default ports, dot segments and IDN
 * spellings compare as what is actually sent. Undefined when `prefix` is no http(s) URL prefix
 * (no scheme, credentials, query or fragment).
 */
export function matchesUrlPrefix(prefix: string, url: string): boolean | undefined {
  const p = parseUrl(prefix);
  if (!p || (p.protocol !== "http:" && p.protocol !== "https:")) return undefined;
  if (p.username !== "" || p.password !== "" || p.search !== "" || p.hash !== "") return undefined;
  const u = parseUrl(url);
  if (!u) return false;
  if (u.protocol !== p.protocol || u.hostname !== p.hostname || u.port !== p.port) return false;
  const base = p.pathname.replace(/\/+$/, "");
  return base === "" || u.pathname === base || u.pathname.startsWith(`${base}/`);
}

function parseUrl(raw: string): URL | undefined {
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
}

function wildcardMatch(rule: string, value: string): boolean {
  return rule === "*" || rule === value;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const RULE_FIELDS: ReadonlySet<string> = new Set(["namespace", "secret", "urls"]);

/**
 * `credential-bindings`: a YAML list of `{namespace, secret, urls}`; `namespace` and `secret`
 * are names or `*`, `urls` a pattern or a list of them (full match, as `allowed-urls`). Strict:
 * a missing or unknown field, a bad name or pattern throws ConfigError naming the key.
 */
export function parseCredentialBindings(raw: string | undefined): CredentialBinding[] {
  if (raw === undefined || raw.trim() === "") return [];
  const key = CREDENTIAL_BINDINGS_KEY;
  let doc: unknown;
  try {
    doc = yaml.load(raw);
  } catch (err) {
    throw new ConfigError(key, `not YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  if (!Array.isArray(doc)) {
    throw new ConfigError(key, "must be a YAML list of {namespace, secret, urls}");
  }
  return doc.map((entry: unknown, i) => {
    const at = `entry ${i}`;
    if (entry === null || typeof entry !== "object" || Array.isArray(entry)) {
      throw new ConfigError(key, `${at}: expected a mapping {namespace, secret, urls}`);
    }
    const fields = entry as Record<string, unknown>;
    const unknown = Object.keys(fields).filter((f) => !RULE_FIELDS.has(f));
    if (unknown.length > 0) {
      throw new ConfigError(
        key,
        `${at}: unknown field(s) ${unknown.join(", ")} (expected namespace, secret, urls)`,
      );
    }
    const namespace = nameField(fields, "namespace", DNS_LABEL, at);
    const secret = nameField(fields, "secret", DNS_SUBDOMAIN, at);
    const urls = typeof fields.urls === "string" ? [fields.urls] : fields.urls;
    if (
      !Array.isArray(urls) ||
      urls.length === 0 ||
      !urls.every((u) => typeof u === "string" && u.trim() !== "")
    ) {
      throw new ConfigError(key, `${at}: urls must be a pattern or a non-empty list of patterns`);
    }
    return { namespace, secret, urls: urls.map((u: string) => configPattern(key, u.trim())) };
  });
}

function nameField(fields: Record<string, unknown>, field: string, shape: RegExp, at: string): string {
  const value = fields[field];
  if (typeof value !== "string" || (value !== "*" && !shape.test(value))) {
    throw new ConfigError(
      CREDENTIAL_BINDINGS_KEY,
      `${at}: ${field} must be a name or "*", got ${JSON.stringify(value ?? null)}`,
    );
  }
  return value;
}
