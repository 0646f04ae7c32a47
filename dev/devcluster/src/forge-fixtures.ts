// Protocol fixtures for the git resolver's API mode: real HTTP servers on loopback that answer
// the few REST endpoints API mode calls, with the request and answer shapes the forges' published
// API descriptions give (GitHub's REST API, docs.github.com/rest: repos/contents, commits, repos;
// GitLab's REST API v4, docs.gitlab.com/api: repository_files, commits, projects). They are not
// forges: one repository map in memory, only GET, only the fields API mode reads plus a few
// neighbours. Gitea is tested against the real server instead (gitea.ts).
//
//   GitHub (Enterprise layout, /api/v3 under the server URL, as go-scm builds it):
//     GET /api/v3/repos/{owner}/{repo}/commits/{ref}          -> { sha, ... }
//     GET /api/v3/repos/{owner}/{repo}/contents/{path}?ref=R  -> { type: "file", encoding: "base64", content, path, ... }
//     GET /api/v3/repos/{owner}/{repo}                        -> { full_name, clone_url, ... }
//     token: `Authorization: Bearer <t>` or `token <t>`; a private repository is 404 without it
//   GitLab:
//     GET /api/v4/projects/{url-encoded path}/repository/commits/{ref}            -> { id, short_id, ... }
//     GET /api/v4/projects/{url-encoded path}/repository/files/{url-encoded path}?ref=R
//                                                          -> { file_path, encoding: "base64", content, ... }
//     GET /api/v4/projects/{url-encoded path}                                      -> { http_url_to_repo, ... }
//     token: `PRIVATE-TOKEN: <t>`; a private project is 404 without it, 401 with a wrong one
//
// Every request is recorded with its token headers, so a test can assert where a token went.
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type FixtureForge = "github" | "gitlab";

export interface FixtureRepo {
  /** Branch or tag → commit. */
  refs: Record<string, string>;
  /** Commit → path → content. */
  commits: Record<string, Record<string, string>>;
  /** A token the repository wants; public when unset. */
  token?: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  privateToken: string | undefined;
  status: number;
}

export interface ForgeFixture {
  readonly kind: FixtureForge;
  /** e.g. http://127.0.0.1:41234: the resolver's serverURL / server-url. */
  readonly baseUrl: string;
  /** Every request so far. */
  readonly requests: RecordedRequest[];
  /** Adds `org/name` with files on `main` at one commit; returns that commit. */
  addRepo(fullName: string, files: Record<string, string>, opts?: { token?: string }): string;
  /** Moves (or creates) a branch to a new commit with these files; returns the commit. */
  commit(fullName: string, branch: string, files: Record<string, string>): string;
  stop(): Promise<void>;
}

export const newSha = (): string => randomBytes(20).toString("hex");

export async function startForgeFixture(kind: FixtureForge): Promise<ForgeFixture> {
  const repos = new Map<string, FixtureRepo>();
  const requests: RecordedRequest[] = [];
  let baseUrl = "";

  /** Answers JSON; returns the status, for the record. */
  const json = (res: ServerResponse, status: number, body: unknown): number => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
    return status;
  };
  const tokenOf = (req: IncomingMessage): string | undefined => {
    if (kind === "gitlab") return header(req, "private-token");
    const auth = header(req, "authorization");
    const m = auth ? /^(?:Bearer|token) (.+)$/i.exec(auth) : null;
    return m?.[1];
  };

  const handle = (req: IncomingMessage, res: ServerResponse): number => {
    if (req.method !== "GET") return json(res, 405, { message: "Method Not Allowed" });
    const url = new URL(req.url ?? "/", "http://fixture");
    // split before decoding: GitLab's project id and file path are single %2F-encoded segments
    const parts = url.pathname.split("/").slice(1).map(decodeURIComponent);
    const notFound = () => json(res, 404, { message: kind === "gitlab" ? "404 Not Found" : "Not Found" });
    let fullName: string;
    let rest: string[];
    if (kind === "github") {
      if (parts[0] !== "api" || parts[1] !== "v3" || parts[2] !== "repos" || parts.length < 5)
        return notFound();
      fullName = `${parts[3]}/${parts[4]}`;
      rest = parts.slice(5);
    } else {
      if (parts[0] !== "api" || parts[1] !== "v4" || parts[2] !== "projects" || parts.length < 4)
        return notFound();
      fullName = parts[3]!;
      rest = parts.slice(4);
    }
    const repo = repos.get(fullName);
    if (!repo) return notFound();
    if (repo.token !== undefined) {
      const given = tokenOf(req);
      if (given === undefined) return notFound();
      if (given !== repo.token)
        return json(res, 401, { message: kind === "gitlab" ? "401 Unauthorized" : "Bad credentials" });
    }
    const commitOf = (ref: string) => (ref in repo.commits ? ref : repo.refs[ref]);
    const cloneUrl = `${baseUrl}/${fullName}.git`;
    if (kind === "github") {
      if (rest.length === 0) {
        return json(res, 200, {
          full_name: fullName,
          name: parts[4],
          private: repo.token !== undefined,
          clone_url: cloneUrl,
          default_branch: "main",
        });
      }
      if (rest[0] === "commits" && rest.length === 2) {
        const sha = commitOf(rest[1]!);
        if (!sha) return json(res, 422, { message: `No commit found for SHA: ${rest[1]}` });
        return json(res, 200, { sha, commit: { message: "fixture" } });
      }
      if (rest[0] === "contents" && rest.length >= 2) {
        const sha = commitOf(url.searchParams.get("ref") ?? "main");
        const path = rest.slice(1).join("/");
        const content = sha ? repo.commits[sha]?.[path] : undefined;
        if (content === undefined) return notFound();
        const b64 = Buffer.from(content).toString("base64").replace(/.{60}/g, "$&\n");
        return json(res, 200, {
          type: "file",
          encoding: "base64",
          size: content.length,
          name: path.split("/").pop(),
          path,
          content: b64,
          sha: newSha(),
        });
      }
      return notFound();
    }
    if (rest.length === 0) {
      return json(res, 200, {
        path_with_namespace: fullName,
        http_url_to_repo: cloneUrl,
        default_branch: "main",
        visibility: repo.token ? "private" : "public",
      });
    }
    if (rest[0] === "repository" && rest[1] === "commits" && rest.length === 3) {
      const sha = commitOf(rest[2]!);
      if (!sha) return json(res, 404, { message: "404 Commit Not Found" });
      return json(res, 200, { id: sha, short_id: sha.slice(0, 8), title: "fixture" });
    }
    if (rest[0] === "repository" && rest[1] === "files" && rest.length === 3) {
      const ref = url.searchParams.get("ref");
      if (!ref) return json(res, 400, { error: "ref is missing" });
      const sha = commitOf(ref);
      const path = rest[2]!;
      const content = sha ? repo.commits[sha]?.[path] : undefined;
      if (content === undefined) return json(res, 404, { message: "404 File Not Found" });
      return json(res, 200, {
        file_name: path.split("/").pop(),
        file_path: path,
        size: content.length,
        encoding: "base64",
        content: Buffer.from(content).toString("base64"),
        ref,
        blob_id: newSha(),
        commit_id: sha,
        last_commit_id: sha,
      });
    }
    return notFound();
  };

  const server = createServer((req, res) => {
    const status = handle(req, res);
    requests.push({
      method: req.method ?? "",
      path: req.url ?? "",
      authorization: header(req, "authorization"),
      privateToken: header(req, "private-token"),
      status,
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const repoOf = (fullName: string) => {
    const repo = repos.get(fullName);
    if (!repo) throw new Error(`fixture has no repository ${fullName}`);
    return repo;
  };
  return {
    kind,
    baseUrl,
    requests,
    addRepo(fullName, files, opts = {}) {
      const sha = newSha();
      repos.set(fullName, {
        refs: { main: sha },
        commits: { [sha]: { ...files } },
        ...(opts.token ? { token: opts.token } : {}),
      });
      return sha;
    },
    commit(fullName, branch, files) {
      const repo = repoOf(fullName);
      const sha = newSha();
      repo.commits[sha] = { ...files };
      repo.refs[branch] = sha;
      return sha;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
