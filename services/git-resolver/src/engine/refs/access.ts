// Proof that a caller's credentials can read a repository, asked of the
// server before anything cached from it is handed out: cached objects were
// fetched with somebody's credentials, and one tenant's token must never
// serve another tenant. A proof (one capability request, or a ref lookup that
// succeeded) is trusted for a while per URL and credential hash; when the
// server cannot be reached, credentials proven before may still read the
// cache (stale, not wrong).
import type { Logger } from "@quarry/observability";
import { credentialHash } from "../credentials.ts";
import { GitSourceError, type SourceRequest } from "../source.ts";
import type { SourceStats } from "../stats.ts";
import type { RefDiscovery } from "./ref-discovery.ts";

export interface AccessProofsOptions {
  discovery: RefDiscovery;
  stats: Pick<SourceStats, "accessChecks">;
  /** How long a successful check for (url, credentials) is trusted (default a minute). */
  ttlMs?: number | undefined;
  now: () => number;
  log?: Logger | undefined;
}

export class AccessProofs {
  /** accessKey → time the credentials were last proven to read the repository. */
  private readonly proven = new Map<string, number>();
  private readonly checking = new Map<string, Promise<void>>();
  private readonly opts: AccessProofsOptions;

  constructor(opts: AccessProofsOptions) {
    this.opts = opts;
  }

  /** Records that `req`'s credentials just read `url` on the server (a ref lookup answered). */
  record(url: string, req: SourceRequest): void {
    this.proven.set(accessKey(url, req), this.opts.now());
  }

  /**
   * The caller's credentials must be able to read the repository before
   * anything cached from it is handed out. When the server cannot be reached,
   * credentials that were proven before still read the cache (stale, not wrong).
   */
  async check(url: string, req: SourceRequest): Promise<void> {
    const key = accessKey(url, req);
    const proven = this.proven.get(key);
    if (proven !== undefined && this.opts.now() - proven < (this.opts.ttlMs ?? 60_000)) return;
    // concurrent reads with the same credentials share one check
    let pending = this.checking.get(key);
    if (!pending) {
      this.opts.stats.accessChecks++;
      pending = this.opts.discovery
        .checkAccess(url, req)
        .then(() => {
          this.proven.set(key, this.opts.now());
        })
        .finally(() => this.checking.delete(key));
      this.checking.set(key, pending);
    }
    try {
      await pending;
    } catch (err) {
      if (err instanceof GitSourceError && err.code === "unavailable" && proven !== undefined) {
        this.opts.log?.warn(
          { url, err: err.message },
          "git server unreachable; serving the cache to proven credentials",
        );
        return;
      }
      throw err;
    }
  }
}

/** Access is proven per URL and credential; the key holds a hash, never the token. */
function accessKey(url: string, req: SourceRequest): string {
  return `${url}\n${credentialHash(req)}`;
}
