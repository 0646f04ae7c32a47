// What the git resolver writes into a request's status when it resolves a
// file: its own annotations and refSource (services/git-resolver resolved())
// through the resolver SDK's successStatus(), as the service does, plus the
// observedGeneration the SDK adds. Benchmarks that play the resolver use it to
// give a request a git request's real shape.
import { successStatus } from "../../libs/resolver-sdk/src/index.ts";
import type { GitRequest } from "../../services/git-resolver/src/params.ts";
import { resolved } from "../../services/git-resolver/src/resolver.ts";

export function gitSuccessStatus(
  url: string,
  commit: string,
  path: string,
  content: string,
): Record<string, unknown> {
  // resolved() reads only the request's normalised url and path
  const req = { url, path } as GitRequest;
  return { ...successStatus(resolved(req, commit, Buffer.from(content), path)), observedGeneration: 1 };
}
