// One GET through the egress policy, as every source that speaks plain HTTP
// (http, hub, forge APIs) needs it: each connection checked on its resolved
// address, redirects followed within the origin only (a credential re-checked
// for every URL it would go to), the body read with a cap, and every outcome
// sorted into terminal (a ResolutionError with a reason) or transient (a plain
// Error the runtime retries).
import { type Egress, type EgressDispatchers, egressFetch } from "./egress.ts";
import { EgressError, egressReason } from "./egress-error.ts";
import { forbidden, notFound, ResolutionError } from "./errors.ts";
import { followRedirects, type SendOnce } from "./redirects.ts";
import { readCappedBody } from "./response-body.ts";

export interface EgressGetOptions {
  egress: () => Egress;
  dispatchers: EgressDispatchers;
  signal: AbortSignal;
  headers?: RequestInit["headers"];
  /** Names the source in messages, e.g. `param "url": https://h/task.yaml`. */
  at: string;
  /** Prefixes an egress refusal (blocked address, other origin); default `at`. */
  refusedAt?: string;
  /** Runs before the request and every redirect hop is sent: throws to stop a credential going there. */
  beforeEach?: (url: URL) => void;
  /** A non-200 answer as an error; default `httpStatusError(status, at)`. */
  statusError?: (status: number) => Error;
  /** Default: the 1 MiB limit on resolved data. */
  maxBytes?: number;
}

/** The body of a 200 answer to GET `url`. */
export async function egressGet(url: URL, opts: EgressGetOptions): Promise<Uint8Array> {
  const fetch = egressFetch(opts.egress, opts.dispatchers);
  const send: SendOnce = (target, init) => {
    opts.beforeEach?.(target);
    return fetch(target, { ...init, redirect: "manual" });
  };
  let res: Response;
  try {
    res = await followRedirects(send, url, { headers: opts.headers, signal: opts.signal });
  } catch (err) {
    // the policy's refusals are terminal; a network error is retried
    if (err instanceof EgressError)
      throw new ResolutionError(egressReason(err), `${opts.refusedAt ?? opts.at}: ${err.message}`, {
        cause: err,
      });
    if (err instanceof ResolutionError || opts.signal.aborted) throw err;
    throw new Error(`${opts.at}: ${(err as Error).message}`, { cause: err });
  }
  if (res.status !== 200) {
    await res.body?.cancel();
    throw (opts.statusError ?? ((s) => httpStatusError(s, opts.at)))(res.status);
  }
  return readCappedBody(res, opts.at, opts.maxBytes);
}

/** Answers a source may recover from: 5xx, 429 Too Many Requests, 408 Request Timeout. */
export const isTransientStatus = (status: number): boolean =>
  status >= 500 || status === 429 || status === 408;

/** A non-200 answer: NotFound, Forbidden, transient (a plain Error, retried) or SourceUnavailable. */
export function httpStatusError(status: number, at: string, forbiddenHint = ""): Error {
  if (status === 404 || status === 410) return notFound(`${at} answered ${status} Not Found`);
  if (status === 401 || status === 403) return forbidden(`${at} answered ${status}${forbiddenHint}`);
  if (isTransientStatus(status)) return new Error(`${at} answered ${status}`);
  return new ResolutionError("SourceUnavailable", `${at} answered ${status}; only 200 is accepted`);
}
