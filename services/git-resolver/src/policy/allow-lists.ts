// Who may read which repository at which revision: git-resolver-config's
// allow-lists, and the link-local metadata addresses no allow-list opens
// (metadataHostProblem). Pure; a refusal is Forbidden and names the param and the key.
// A literal address in blocked-networks fails here too, before any Secret is
// read; a name is checked where it resolves, on every connection (engine/refs/ref-discovery.ts, engine/git/git-pin.ts).
import { checkLiteralAddress, EgressError, forbidden, metadataHostProblem } from "@quarry/resolver-sdk";
import type { GitConfig } from "../config.ts";
import type { GitRequest } from "../params.ts";

/** Throws Forbidden when the URL or revision is outside the allow-lists for this namespace. */
export function checkPolicy(
  req: Pick<GitRequest, "url" | "revisionText">,
  config: GitConfig,
  namespace: string,
): void {
  const { url, revisionText } = req;
  const host = new URL(url).hostname;
  const problem = metadataHostProblem(host);
  if (problem) throw forbidden(`param "url": ${problem}`);
  try {
    checkLiteralAddress(host, config.blockedNetworks);
  } catch (err) {
    if (err instanceof EgressError) throw forbidden(`param "url": ${err.message}`);
    throw err;
  }
  if (config.allowedUrls.length > 0 && !config.allowedUrls.some((re) => re.test(url))) {
    throw forbidden(`param "url": ${url} is not allowed by allowed-urls in git-resolver-config`);
  }
  if (config.namespaceUrls) {
    const rules = config.namespaceUrls.get(namespace) ?? config.namespaceUrls.get("*");
    if (!rules?.some((re) => re.test(url))) {
      throw forbidden(
        `param "url": ${url} is not allowed for namespace ${namespace} by namespace-allowed-urls in git-resolver-config`,
      );
    }
  }
  if (config.allowedRevisions.length > 0 && !config.allowedRevisions.some((re) => re.test(revisionText))) {
    throw forbidden(
      `param "revision": ${JSON.stringify(revisionText)} is not allowed by allowed-revisions in git-resolver-config`,
    );
  }
}
