// git commands that talk to a cached repository's remote (fetches) or rewrite
// it (repack): run with the request's credentials, proxy and trust in the
// environment, the address checked by git-pin.ts, and at most a bounded
// number of git processes at once; a failure becomes a GitSourceError whose
// message names the repository, never the credentials.
import { redactUrl } from "@quarry/resolver-sdk";
import { GitSourceError, type SourceRequest } from "../source.ts";
import { caFileFor } from "./ca-file.ts";
import { classifyGitFailure, lastLine, remoteEnv, runGit, Semaphore } from "./git-process.ts";

/** A cached repository: its git dir and the remote URL it mirrors. */
export interface RemoteRepo {
  readonly dir: string;
  readonly url: string;
}

export class RemoteGit {
  private readonly gate: Semaphore;

  constructor(maxConcurrent: number) {
    this.gate = new Semaphore(maxConcurrent);
  }

  /** Runs git for a repository; `req.pin` is the checked-address entry of a network command (git-pin.ts). */
  run(
    repo: RemoteRepo,
    req: SourceRequest & { pin?: string | undefined },
    signal: AbortSignal,
    args: string[],
    input?: string,
  ) {
    const env = remoteEnv(repo.url, {
      auth: req.auth,
      proxy: req.proxy,
      caFile: caFileFor(req.caBundle),
      resolve: req.pin,
    });
    return this.gate.run(() =>
      runGit({
        gitDir: repo.dir,
        args,
        signal,
        env,
        ...(input === undefined ? {} : { input }),
      }),
    );
  }
}

/** A failed network command's stderr, as the error the request shows; `what` names the object asked for. */
export function remoteFailure(
  url: string,
  stderr: string,
  what: string,
  req: Pick<SourceRequest, "proxy">,
): GitSourceError {
  const code = classifyGitFailure(stderr);
  switch (code) {
    case "repo-not-found":
      return new GitSourceError(code, `repository ${url} not found`);
    case "auth":
      return new GitSourceError(code, `${url} refused the credentials`);
    case "revision-not-found":
      return new GitSourceError(code, `${what} not found in ${url}`);
    case "tls":
      return new GitSourceError(
        code,
        `TLS: the certificate of ${hostOf(url)} is not trusted (${lastLine(stderr)}); add its CA to the git resolver's ca-bundle`,
      );
    case "proxy-refused":
      return new GitSourceError(
        code,
        `proxy ${redactUrl(req.proxy ?? "")} refused to connect to ${hostOf(url)} (${lastLine(stderr)})`,
      );
    default:
      return new GitSourceError(code, `git failed for ${url}: ${lastLine(stderr)}`);
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
