// The http resolver's params, with Tekton's names, and their checks. Pure:
// every refusal is an InvalidParams message that names the param, given
// before anything is fetched (Tekton checks the digest's form only after
// the download).
import { invalidParams, type Params, type ParamsSchema } from "@quarry/resolver-sdk";

export const URL_PARAM = "url";
export const USERNAME_PARAM = "http-username";
export const SECRET_PARAM = "http-password-secret";
export const SECRET_KEY_PARAM = "http-password-secret-key";
export const DIGEST_PARAM = "digest";
/** Tekton's default key of the password in `http-password-secret`. */
export const DEFAULT_SECRET_KEY = "password";

/** Caps, so a hostile megabyte-long param is refused at once: a URL as browsers cap it, names as Kubernetes does. */
const capped = (maxLength: number) => ({ type: "string", maxLength }) as const;

export const paramsSchema: ParamsSchema = {
  type: "object",
  properties: {
    [URL_PARAM]: capped(4096),
    [USERNAME_PARAM]: capped(1024),
    [SECRET_PARAM]: capped(253),
    [SECRET_KEY_PARAM]: capped(253),
    // "sha512:" and 128 hex digits, with room for a wrong algorithm name to be reported as such
    [DIGEST_PARAM]: capped(256),
  },
  required: [URL_PARAM],
  additionalProperties: false,
};

export type DigestAlgorithm = "sha256" | "sha512";

/** A `digest` param: the algorithm and the expected hash, lower-case hex. */
export interface Digest {
  algorithm: DigestAlgorithm;
  hex: string;
}

/** Basic auth: the user name, and the Secret (in the request's namespace) and key holding the password. */
export interface BasicAuth {
  username: string;
  secret: string;
  key: string;
}

export interface HttpRequest {
  /** The URL as the request names it: what the annotation and refSource carry, as Tekton's. */
  url: string;
  /** The same URL parsed: what is fetched and what credentials are bound against. */
  target: URL;
  auth: BasicAuth | undefined;
  digest: Digest | undefined;
}

const HEX_LENGTH: Readonly<Record<DigestAlgorithm, number>> = { sha256: 64, sha512: 128 };

function str(params: Params, name: string): string | undefined {
  const v = params[name];
  return typeof v === "string" ? v : undefined;
}

/** Checks the params as Tekton's http resolver does (and a little more); throws InvalidParams naming the param. */
export function parseRequest(params: Params): HttpRequest {
  const url = str(params, URL_PARAM) ?? "";
  const target = checkUrl(url);
  if ("error" in target) throw invalidParams(`param "${URL_PARAM}": ${target.error}`);

  const username = str(params, USERNAME_PARAM);
  const secret = str(params, SECRET_PARAM);
  if (username !== undefined && secret === undefined)
    throw invalidParams(`param "${SECRET_PARAM}" is required when "${USERNAME_PARAM}" is given`);
  if (secret !== undefined && username === undefined)
    throw invalidParams(`param "${USERNAME_PARAM}" is required when "${SECRET_PARAM}" is given`);
  if (username === "") throw invalidParams(`param "${USERNAME_PARAM}" must not be empty`);
  if (secret === "") throw invalidParams(`param "${SECRET_PARAM}" must not be empty`);
  if (username?.includes(":"))
    throw invalidParams(`param "${USERNAME_PARAM}" must not contain ":" (Basic auth's separator)`);
  const auth =
    username !== undefined && secret !== undefined
      ? { username, secret, key: str(params, SECRET_KEY_PARAM) || DEFAULT_SECRET_KEY }
      : undefined;

  const rawDigest = str(params, DIGEST_PARAM);
  let digest: Digest | undefined;
  if (rawDigest !== undefined) {
    const parsed = parseDigest(rawDigest);
    if ("error" in parsed) throw invalidParams(`param "${DIGEST_PARAM}": ${parsed.error}`);
    digest = parsed;
  }
  return { url, target, auth, digest };
}

/** An absolute http(s) URL without credentials in it, or why not. */
export function checkUrl(raw: string): URL | { error: string } {
  if (raw === "") return { error: "is required and must not be empty" };
  if (raw.trim() !== raw)
    return { error: `must not start or end with white space (got ${JSON.stringify(raw)})` };
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { error: `${JSON.stringify(raw)} is not an absolute URL` };
  }
  if (u.protocol !== "http:" && u.protocol !== "https:")
    return { error: `${JSON.stringify(raw)} is not an http or https URL` };
  // a password in the URL would go out unbound; Basic auth goes through http-password-secret
  if (u.username !== "" || u.password !== "")
    return {
      error: `must not carry credentials (user@ or user:password@); use "${USERNAME_PARAM}" and "${SECRET_PARAM}"`,
    };
  return u;
}

/** `sha256:<64 hex>` or `sha512:<128 hex>` (Tekton's form), or why not. */
export function parseDigest(raw: string): Digest | { error: string } {
  const colon = raw.indexOf(":");
  if (colon < 0) return { error: `${JSON.stringify(raw)} is not <algorithm>:<hex> (sha256:… or sha512:…)` };
  const algorithm = raw.slice(0, colon);
  const hex = raw.slice(colon + 1);
  if (algorithm !== "sha256" && algorithm !== "sha512")
    return { error: `algorithm ${JSON.stringify(algorithm)} is not supported; use sha256 or sha512` };
  const want = HEX_LENGTH[algorithm];
  if (hex.length !== want)
    return { error: `a ${algorithm} digest has ${want} hex digits, got ${hex.length}` };
  if (!/^[0-9a-fA-F]+$/.test(hex)) return { error: `the ${algorithm} digest is not hexadecimal` };
  return { algorithm, hex: hex.toLowerCase() };
}

/** Whether the params pin the content (a well-formed digest): the runtime then caches in "auto" mode. */
export function pinsContent(params: Params): boolean {
  const raw = str(params, DIGEST_PARAM);
  return raw !== undefined && !("error" in parseDigest(raw));
}
