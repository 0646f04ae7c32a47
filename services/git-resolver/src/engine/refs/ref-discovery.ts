// Ref discovery in-process: a branch or tag resolves in ONE HTTP request, a
// protocol-v2 `ls-refs` POST holding every candidate ref as a prefix, so a
// repository with thousands of refs (pull requests) answers with a line or
// two (ls-refs.ts). What the server speaks (v2? sha256?) is learned once per
// URL from a capability advertisement (isomorphic-git) and remembered; a
// server that does not speak v2 is asked the old way (isomorphic-git's
// ls-refs per candidate, protocol v1 for sha256). No process, no disk.
//
// Egress policy: every connection's address is checked against
// blocked-networks (the agents' lookup hands the socket the checked
// addresses; a literal address is checked before the first request), and no
// redirect is followed (the git binary that fetches later follows none either).
import type { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { nodeHttp } from "@quarry/kube";
import {
  type BlockedNetworks,
  checkedLookup,
  checkTarget,
  DEFAULT_BLOCKED_NETWORKS,
  trustedCas,
} from "@quarry/resolver-sdk";
import type { getRemoteInfo2, listServerRefs } from "isomorphic-git";
import { LRUCache } from "lru-cache";
import { basicAuthHeader } from "../credentials.ts";
import { toSourceError } from "../network-errors.ts";
import { GitSourceError, type SourceRequest } from "../source.ts";
import { postLsRefs } from "./ls-refs.ts";
import { pickRef, refCandidates, type ServerRef } from "./revision.ts";

type HttpClient = Parameters<typeof listServerRefs>[0]["http"];

interface IsomorphicGit {
  getRemoteInfo2: typeof getRemoteInfo2;
  listServerRefs: typeof listServerRefs;
  request: HttpClient["request"];
}

let isomorphicGit: Promise<IsomorphicGit> | undefined;

/**
 * isomorphic-git and its node HTTP client, imported at the first capability advertisement (a ref
 * lookup or an access check) rather than at start: ~3 MiB of the resolver's RSS at rest
 * (docs/performance.md, "Import costs"). A failed import is not remembered: the next one retries.
 */
function loadIsomorphicGit(): Promise<IsomorphicGit> {
  isomorphicGit ??= Promise.all([import("isomorphic-git"), import("isomorphic-git/http/node")]).then(
    ([git, http]) => ({
      getRemoteInfo2: git.getRemoteInfo2,
      listServerRefs: git.listServerRefs,
      request: http.default.request,
    }),
    (err: unknown) => {
      isomorphicGit = undefined;
      throw err;
    },
  );
  return isomorphicGit;
}

/** Keep-alive agents per proxy, trust and blocked-networks setting, so the GET and POST of a lookup share a connection. */
const agents = new Map<string, { http: HttpAgent; https: HttpsAgent }>();

function agentsFor(req: Pick<SourceRequest, "proxy" | "caBundle" | "blockedNetworks">) {
  const { proxy, caBundle } = req;
  const blocked = blockedOf(req);
  const key = `${proxy ?? ""}\n${caBundle ?? ""}\n${blocked.text}`;
  let pair = agents.get(key);
  if (!pair) {
    // the proxy is the resolver's decision for this URL (no-proxy applied): no bypass list here
    const proxyEnv = proxy ? { HTTP_PROXY: proxy, HTTPS_PROXY: proxy } : undefined;
    const opts = {
      keepAlive: true,
      maxSockets: 16,
      // direct: the socket connects to the addresses the lookup checked; through a proxy the
      // target was checked before the request (checkTarget) and the proxy resolves it
      ...(proxyEnv ? { proxyEnv } : { lookup: checkedLookup(blocked) }),
      ...(caBundle ? { ca: trustedCas({ caBundle }) } : {}),
    };
    pair = { http: new nodeHttp.Agent(opts), https: new HttpsAgent(opts) };
    // settings change rarely; drop the lot rather than grow without bound
    if (agents.size >= 16) agents.clear();
    agents.set(key, pair);
  }
  return pair;
}

const blockedOf = (req: Pick<SourceRequest, "blockedNetworks">): BlockedNetworks =>
  req.blockedNetworks ?? DEFAULT_BLOCKED_NETWORKS;

/**
 * isomorphic-git's node client with our agent (proxy, trust, keep-alive,
 * checked addresses) and the call's abort signal; its redirect following
 * (simple-get's) is off and a redirect answer is refused.
 */
function httpClient(url: string, req: SourceRequest): HttpClient {
  const pair = agentsFor(req);
  return {
    request: async (r) => {
      const { request } = await loadIsomorphicGit();
      const res = await request({
        ...r,
        agent: r.url.startsWith("https:") ? pair.https : pair.http,
        signal: req.signal,
        fetchOptions: { ...r.fetchOptions, followRedirects: false },
      });
      const location = res.headers?.location;
      if (res.statusCode >= 300 && res.statusCode < 400 && location) {
        void res.body?.return?.();
        throw redirectRefusal(url, r.url, location);
      }
      return res;
    },
  };
}

/**
 * Why a redirect answer is not followed: another origin never is (its
 * address would go unchecked by the git binary, and a token might follow);
 * within the origin the repository has moved, and the request should name
 * where. Messages name origins and paths, never a query.
 */
export function redirectRefusal(repoUrl: string, requestUrl: string, location: string): GitSourceError {
  const from = new URL(requestUrl);
  let to: URL;
  try {
    to = new URL(location, from);
  } catch {
    return new GitSourceError(
      "redirect",
      `${from.origin} answered a redirect to an unreadable location; not followed`,
    );
  }
  if (to.origin !== from.origin) {
    return new GitSourceError(
      "redirect",
      `redirected from ${from.origin} to another origin ${to.origin}; not followed`,
    );
  }
  const moved = to.pathname.replace(/\/(info\/refs|git-upload-pack)$/, "");
  return new GitSourceError(
    "redirect",
    `${repoUrl} redirects to ${to.origin}${moved}; the git resolver follows no redirect: name that URL`,
  );
}

function headers(req: SourceRequest): Record<string, string> {
  return req.auth ? { authorization: basicAuthHeader(req.auth) } : {};
}

/** What a server speaks, from its capability advertisement. */
interface ServerProtocol {
  v2: boolean;
  format: "sha1" | "sha256";
}

export interface RefDiscoveryStats {
  /** Capability advertisements asked for (GET info/refs). */
  advertisements: number;
  /** Single-request ls-refs POSTs. */
  lsRefs: number;
}

export class RefDiscovery {
  readonly stats: RefDiscoveryStats = { advertisements: 0, lsRefs: 0 };
  /** Per URL (not per credential: it says nothing about access), re-learned every 10 minutes. */
  private readonly protocols = new LRUCache<string, ServerProtocol>({ max: 1000, ttl: 10 * 60_000 });

  /** The commit `name` (branch, tag, refs/..., HEAD) points to on the remote; annotated tags are peeled. */
  async resolve(url: string, name: string, req: SourceRequest): Promise<string> {
    await guard(url, req, () => checkTarget(new URL(url), req.proxy !== undefined, blockedOf(req)));
    const protocol = this.protocols.get(url) ?? (await this.learnProtocol(url, req));
    const hit = protocol.v2
      ? await this.resolveInOne(url, name, protocol, req)
      : await this.resolveOld(url, name, req);
    if (hit) return hit.commit;
    const hint = /^[0-9a-f]{7,39}$/i.test(name)
      ? "; abbreviated commit ids are not supported, use the full id"
      : "";
    throw new GitSourceError(
      "revision-not-found",
      `no branch, tag or ref named ${JSON.stringify(name)} in ${url}${hint}`,
    );
  }

  /** One POST; a server that turns out not to answer like v2 is asked the old way and remembered so. */
  private async resolveInOne(url: string, name: string, protocol: ServerProtocol, req: SourceRequest) {
    this.stats.lsRefs++;
    const pair = agentsFor(req);
    const answer = await guard(url, req, () =>
      postLsRefs({
        url,
        prefixes: refCandidates(name),
        format: protocol.format,
        authorization: req.auth ? basicAuthHeader(req.auth) : undefined,
        agent: url.startsWith("https:") ? pair.https : pair.http,
        signal: req.signal,
      }),
    );
    if (answer.kind === "refs") return pickRef(answer.refs, name);
    if (answer.kind === "redirect") throw redirectRefusal(url, answer.from, answer.location);
    if (answer.kind === "http-error") {
      throw toSourceError(url, { code: "HttpError", data: { statusCode: answer.status } }, req.signal);
    }
    this.protocols.set(url, { ...protocol, v2: false });
    return this.resolveOld(url, name, req);
  }

  private async learnProtocol(url: string, req: SourceRequest): Promise<ServerProtocol> {
    this.stats.advertisements++;
    const info = await guard(url, req, async () =>
      (await loadIsomorphicGit()).getRemoteInfo2({
        http: httpClient(url, req),
        url,
        protocolVersion: 2,
        headers: headers(req),
      }),
    );
    const protocol: ServerProtocol =
      info.protocolVersion === 2
        ? { v2: true, format: info.capabilities["object-format"] === "sha256" ? "sha256" : "sha1" }
        : { v2: false, format: "sha1" };
    this.protocols.set(url, protocol);
    return protocol;
  }

  /** isomorphic-git's ls-refs per candidate (each after its own advertisement), then protocol v1. */
  private async resolveOld(url: string, name: string, req: SourceRequest) {
    const http = httpClient(url, req);
    const { listServerRefs } = await guard(url, req, loadIsomorphicGit);
    const lists = await guard(url, req, () =>
      Promise.all(
        refCandidates(name).map((prefix) =>
          listServerRefs({ http, url, prefix, protocolVersion: 2, peelTags: true, headers: headers(req) }),
        ),
      ),
    );
    return pickRef(lists.flat(), name) ?? (await this.resolveV1(url, name, req));
  }

  /**
   * isomorphic-git's v2 ls-refs cannot ask a sha256 repository (it does not
   * send object-format), which then answers with no refs; such servers are
   * asked again with protocol v1, which advertises every ref.
   */
  private async resolveV1(url: string, name: string, req: SourceRequest) {
    const http = httpClient(url, req);
    const { getRemoteInfo2, listServerRefs } = await guard(url, req, loadIsomorphicGit);
    const info = await guard(url, req, () =>
      getRemoteInfo2({ http, url, protocolVersion: 2, headers: headers(req) }),
    );
    if (info.protocolVersion === 2 && info.capabilities["object-format"] !== "sha256") return undefined;
    const refs: ServerRef[] = await guard(url, req, () =>
      listServerRefs({ http, url, protocolVersion: 1, peelTags: true, headers: headers(req) }),
    );
    return pickRef(refs, name);
  }

  /** Proves the credentials may read the repository: one capability request. */
  async checkAccess(url: string, req: SourceRequest): Promise<void> {
    await guard(url, req, () => checkTarget(new URL(url), req.proxy !== undefined, blockedOf(req)));
    await this.learnProtocol(url, req);
  }
}

/** Maps isomorphic-git's and Node's errors to GitSourceError codes. */
async function guard<T>(url: string, req: SourceRequest, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toSourceError(url, err, req.signal, req.proxy);
  }
}
