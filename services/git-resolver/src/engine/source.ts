// The one interface the resolver talks to, whatever engine sits behind it:
// what every call needs (SourceRequest), what a read returns, and how the
// engine fails (GitSourceError, classified so the resolver can pick a reason).
import type { BlockedNetworks } from "@quarry/resolver-sdk";
import type { Revision } from "./refs/revision.ts";

/** HTTP basic credentials, sent up front on every request to the git server. */
export interface GitAuth {
  username: string;
  token: string;
}

/** What every source call needs besides its arguments. */
export interface SourceRequest {
  auth: GitAuth | undefined;
  /**
   * Who asks, as far as sharing work goes: the request's namespace and the
   * Secret the token came from. Lookups are shared only between callers with
   * the same scope and the same credentials (docs/decisions.md).
   */
  scope?: string | undefined;
  /** Aborting kills any git work started for the call. */
  signal: AbortSignal;
  /** The http(s) proxy this repository's traffic goes through (no-proxy already applied); direct when unset. */
  proxy?: string | undefined;
  /** PEM CAs trusted besides the public roots. */
  caBundle?: string | undefined;
  /** Networks no connection goes to (checked on each resolved address); the SDK's default when unset. */
  blockedNetworks?: BlockedNetworks | undefined;
  /** Largest on-disk size of the repository's cache (0 = no limit). */
  maxRepositoryBytes?: number;
  /** Budget for the engine's whole on-disk cache (the latest request's value applies). */
  maxCacheBytes?: number;
  /** Least time between the starts of two lookups of one ref by one tenant (GitConfig.refLookupIntervalMs). */
  refLookupIntervalMs?: number;
}

export interface FileRead {
  bytes: Uint8Array;
  /** The path actually read, after symlinks. */
  resolvedPath: string;
}

export interface GitSource {
  /** The commit a branch, tag or ref names on the remote now. */
  resolveRevision(
    url: string,
    revision: Extract<Revision, { kind: "ref" }>,
    req: SourceRequest,
  ): Promise<string>;
  /** A file's bytes at a commit. */
  readFile(url: string, commit: string, path: string, req: SourceRequest): Promise<FileRead>;
}

export type GitErrorCode =
  | "repo-not-found"
  | "revision-not-found"
  | "path-not-found"
  | "not-a-file"
  | "path-escapes"
  | "symlink-loop"
  | "auth"
  | "file-too-large"
  | "repo-too-large"
  | "unavailable"
  | "tls"
  | "proxy-refused"
  /** An address in blocked-networks: the URL's host, or where its name resolves. */
  | "blocked-address"
  /** The server answered a redirect: none is followed for git (another origin would be unchecked). */
  | "redirect"
  | "aborted";

/**
 * A source failure, classified so the resolver can pick a reason and the
 * param to name; the message is safe to show (never holds credentials).
 */
export class GitSourceError extends Error {
  readonly code: GitErrorCode;
  constructor(code: GitErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "GitSourceError";
    this.code = code;
  }
}
