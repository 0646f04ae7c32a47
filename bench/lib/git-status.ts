// What the git resolver writes into a request's status when it resolves a
// file: its own annotations and refSource (services/git-resolver resolved())
// through the resolver SDK's successStatus(), as the service does, plus the
// observedGeneration the SDK adds. Benchmarks that play the resolver use it to
// give a request a git request's real shape.

import type { GitRequest } from "@quarry/git-resolver/params";
import { resolved } from "@quarry/git-resolver/resolver";
import { successStatus } from "@quarry/resolver-sdk/internal";

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
