// Which token an API-mode request sends, and where: a pure decision, table-tested.
//
// The operator's token (api-token-secret-* in git-resolver-config) belongs to the configured
// server-url. It goes only to that server's API: never to a serverURL a request names unless it
// is exactly the configured one (Tekton's CVE-2026-40161 fix), and never to another forge's
// default a request reaches by naming another scmType. A request's own `token` is its namespace's
// Secret and goes only where the credential binding lets it (checked on every URL sent).
import type { ApiSettings } from "../config.ts";
import { FORGES } from "./forges/index.ts";
import { type ApiRequest, DEFAULT_API_TOKEN_KEY, PUBLIC_SERVERS, SCM_TYPES, type ScmType } from "./params.ts";

export type TokenChoice =
  /** The request's Secret, in the request's namespace; its binding is checked per URL. */
  | { kind: "request"; secret: string; key: string }
  /** The operator's Secret; namespace undefined = the resolver's own. */
  | { kind: "operator"; namespace: string | undefined; secret: string; key: string }
  /** Nothing to send: no operator token is configured and the request brought none. */
  | { kind: "anonymous" }
  /** Forbidden: the operator's token would leave its server, and the request brought none. */
  | { kind: "refuse"; message: string };

/** The API address the operator's token belongs to, or undefined when the config names no forge at all. */
export function operatorApiBase(api: ApiSettings): string | undefined {
  const type = (api.scmType ?? "github") as ScmType;
  if (!(SCM_TYPES as readonly string[]).includes(type)) return undefined;
  const server = api.serverUrl ?? PUBLIC_SERVERS[type];
  return server === undefined ? undefined : FORGES[type].apiBase(server);
}

export function chooseToken(req: ApiRequest, api: ApiSettings): TokenChoice {
  if (req.token) return { kind: "request", secret: req.token.secret, key: req.token.key };
  // no operator token, nothing to leak: public repositories are read anonymously anywhere egress allows
  if (api.tokenSecretName === undefined) return { kind: "anonymous" };
  const target = FORGES[req.scmType].apiBase(req.serverUrl);
  const operatorTarget = operatorApiBase(api);
  if (req.requestServerUrl !== undefined && req.requestServerUrl !== api.serverUrl) {
    return {
      kind: "refuse",
      message: `param "serverURL": ${req.requestServerUrl} is not the server-url in git-resolver-config, and the resolver's API token is only sent there; name a Secret of your own in "token"`,
    };
  }
  if (target !== operatorTarget) {
    return {
      kind: "refuse",
      message: `param "scmType": ${req.scmType} at ${req.serverUrl} is not the forge in git-resolver-config (scm-type, server-url), and the resolver's API token is only sent there; name a Secret of your own in "token"`,
    };
  }
  return {
    kind: "operator",
    namespace: api.tokenSecretNamespace,
    secret: api.tokenSecretName,
    key: api.tokenSecretKey ?? DEFAULT_API_TOKEN_KEY,
  };
}
