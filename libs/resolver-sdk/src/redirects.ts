// Redirects as a resolver follows them: within the origin the request was
// sent to, a few hops; to another origin never, unless the caller opts in for
// a request whose answer is verified anyway (a registry blob by its digest),
// and then without any credential. A followed hop is a new request through
// the same egress, so its address is checked like the first one.
import { EgressError } from "./egress-error.ts";

export interface RedirectPolicy {
  /** Hops followed at most (default 5); one more is an EgressError "redirect". */
  maxRedirects?: number;
  /**
   * A Location on another origin (scheme, host or port): "refuse" (default)
   * throws EgressError "cross-origin-redirect"; "without-credentials"
   * follows it without Authorization, Cookie or Proxy-Authorization, and
   * never from https to plain http.
   */
  crossOrigin?: "refuse" | "without-credentials";
}

/** One request, redirects not followed (the caller's `fetch` with redirect: "manual"). */
export type SendOnce = (url: URL, init: RequestInit) => Promise<Response>;

const CREDENTIAL_HEADERS = ["authorization", "cookie", "proxy-authorization"];

export function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

/** Sends `init` to `url` and follows its redirects under `policy`; the last answer is returned. */
export async function followRedirects(
  send: SendOnce,
  url: URL,
  init: RequestInit,
  policy: RedirectPolicy = {},
): Promise<Response> {
  const max = policy.maxRedirects ?? 5;
  const origin = url.origin;
  let current = url;
  let method = (init.method ?? "GET").toUpperCase();
  let body = init.body;
  const headers = new Headers(init.headers);
  for (let hop = 0; ; hop++) {
    const res = await send(current, {
      ...init,
      method,
      headers,
      ...(body === undefined ? {} : { body }),
      redirect: "manual",
    });
    const location = res.headers.get("location");
    if (!isRedirect(res.status) || location === null) return res;
    await res.body?.cancel();
    const next = redirectTarget(current, location);
    if (hop >= max)
      throw new EgressError("redirect", `more than ${max} redirects from ${origin}; not followed`);
    if (next.origin !== origin) {
      if (policy.crossOrigin !== "without-credentials") {
        throw new EgressError(
          "cross-origin-redirect",
          `redirected from ${origin} to another origin ${next.origin}; not followed`,
        );
      }
      if (current.protocol === "https:" && next.protocol === "http:") {
        throw new EgressError(
          "redirect",
          `redirected from ${current.origin} to plain http ${next.origin}; not followed`,
        );
      }
      for (const h of CREDENTIAL_HEADERS) headers.delete(h);
    }
    // as fetch does: 303 (but for HEAD), and 301/302 after a POST, become a GET without a body
    if (
      (res.status === 303 && method !== "HEAD") ||
      ((res.status === 301 || res.status === 302) && method === "POST")
    ) {
      method = "GET";
      body = undefined;
      headers.delete("content-type");
      headers.delete("content-length");
    } else if (body instanceof ReadableStream) {
      throw new EgressError("redirect", `${current.origin} redirected a streamed request body; not followed`);
    }
    current = next;
  }
}

function redirectTarget(from: URL, location: string): URL {
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    throw new EgressError("redirect", `${from.origin} redirected to ${JSON.stringify(location)}, not a URL`);
  }
  if (next.protocol !== "http:" && next.protocol !== "https:")
    throw new EgressError("redirect", `${from.origin} redirected to a ${next.protocol} URL; not followed`);
  if (next.username || next.password)
    throw new EgressError("redirect", `${from.origin} redirected to a URL with credentials; not followed`);
  return next;
}
