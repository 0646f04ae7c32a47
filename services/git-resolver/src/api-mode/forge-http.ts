// ForgeHttp over the resolver's egress: every request through egressFetch (checked resolved
// address, proxy, CA bundle), redirects followed within the origin only, a request's own token
// re-checked against its binding on every URL it would go to, the body read with a cap.
import {
  type Egress,
  type EgressDispatchers,
  egressGet,
  forbidden,
  isTransientStatus,
  notFound,
  ResolutionError,
} from "@quarry/resolver-sdk";
import { type Ask, ForgeAnswerError, type ForgeHttp } from "./forges/forge.ts";

/** A base64 file of the 1 MiB resolved-data cap is ~1.4 MiB; a JSON answer gets room for its fields. */
const MAX_ANSWER_BYTES = 2 * 1024 * 1024;

export interface ForgeHttpOptions {
  egress: Egress;
  dispatchers: EgressDispatchers;
  signal: AbortSignal;
  /** The token header, if a token goes. */
  auth: [name: string, value: string] | undefined;
  /** Throws unless the token may go to this URL (a request's own token: its binding). */
  mayCarry?: (url: URL) => void;
  /** Names the server in messages (`serverURL`). */
  server: string;
}

export function forgeHttp(opts: ForgeHttpOptions): ForgeHttp {
  return {
    async getJson(url: URL, ask: Ask): Promise<unknown> {
      const headers = new Headers({ accept: "application/json" });
      if (opts.auth) headers.set(opts.auth[0], opts.auth[1]);
      const bytes = await egressGet(url, {
        egress: () => opts.egress,
        dispatchers: opts.dispatchers,
        signal: opts.signal,
        headers,
        at: `param "${ask.param}": ${ask.what}`,
        refusedAt: 'param "serverURL"',
        beforeEach: (u) => {
          if (opts.auth) opts.mayCarry?.(u);
        },
        statusError: (status) => statusError(status, ask, opts.server, opts.auth !== undefined),
        maxBytes: MAX_ANSWER_BYTES,
      });
      try {
        return JSON.parse(Buffer.from(bytes).toString("utf8"));
      } catch {
        throw new ForgeAnswerError(`${ask.what}: ${opts.server} answered something that is not JSON`);
      }
    },
  };
}

/** A non-200 answer: terminal with a reason naming the param, or transient (a plain Error, retried). */
export function statusError(status: number, ask: Ask, server: string, withToken: boolean): Error {
  const at = `param "${ask.param}": ${ask.what} at ${server}`;
  // forges answer 404 for a private repository the caller may not see
  if (status === 404 || status === 410) return notFound(`${at}: not found (${status})`);
  if (status === 401 || status === 403)
    return forbidden(
      `${at}: ${status}${withToken ? ", the token was refused" : ', the forge wants a token: name a Secret in "token"'}`,
    );
  if (isTransientStatus(status)) return new Error(`${at}: answered ${status}`);
  return new ResolutionError("SourceUnavailable", `${at}: answered ${status}`);
}
