// A real Gitea server for the git resolver's API mode (`scmType: gitea`): the binary
// dev/devcluster/src/build-gitea.sh builds from the Go module proxy (cached), started by the
// test process on loopback with SQLite in a temp directory, no SSH server, no mailer, offline.
// startGitea() returns it with an admin user and that user's API token; repositories, files on
// branches and more users with their own tokens are made through the REST API, the way a
// person would on a real forge.
//
// Tekton's git resolver (go-scm's gitea driver, code.gitea.io/sdk) reads a file with
//   GET /api/v1/version                                    (client construction)
//   GET /api/v1/repos/{owner}/{repo}/contents/{path}?ref=R  (JSON, content base64)
//   GET /api/v1/repos/{owner}/{repo}/git/commits/{R}        (R: branch, tag or sha -> sha)
//   GET /api/v1/repos/{owner}/{repo}                        (clone_url)
// with `Authorization: token <token>`; e2e/scenarios/git-api-gitea.test.ts reads a file through each.
import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "./controlplane.ts";
import { repoRoot } from "./paths.ts";
import { waitUntil } from "./wait.ts";

const run = promisify(execFile);

export interface GiteaUser {
  username: string;
  password: string;
  /** API token (scopes as created), sent as `Authorization: token <token>`. */
  token: string;
}

export interface GiteaRepo {
  owner: string;
  name: string;
  /** `owner/name`, as the resolver's org and repo params join them. */
  fullName: string;
  /** http clone URL (what GET /repos/{owner}/{repo} reports as clone_url). */
  cloneUrl: string;
  defaultBranch: string;
}

export interface FileCommit {
  path: string;
  /** The commit that wrote the file. */
  commit: string;
  /** The file's blob sha. */
  blob: string;
}

export interface Gitea {
  /** e.g. http://127.0.0.1:41234 (ROOT_URL without the trailing slash): the resolver's serverURL. */
  readonly baseUrl: string;
  /** baseUrl + /api/v1 */
  readonly apiUrl: string;
  readonly admin: GiteaUser;
  /** Calls the REST API as `as` (default: the admin, by token); throws on a status >= 400. */
  api<T>(method: string, path: string, body?: unknown, as?: GiteaUser): Promise<T>;
  /** A non-admin user with a token of these scopes (default read and write of repositories). */
  createUser(username: string, scopes?: string[]): Promise<GiteaUser>;
  /** A repository of `owner` (default: the admin) with an initial commit on `main`. */
  createRepo(name: string, opts?: { owner?: GiteaUser; private?: boolean }): Promise<GiteaRepo>;
  /**
   * Creates or replaces a file in one commit on `branch` (default: the repository's default
   * branch). `fromBranch` starts `branch` as a new branch from that one.
   */
  writeFile(
    repo: GiteaRepo,
    path: string,
    content: string,
    opts?: { branch?: string; fromBranch?: string; message?: string; as?: GiteaUser },
  ): Promise<FileCommit>;
  /** The commit sha a branch, tag or sha names (GET /repos/{owner}/{repo}/git/commits/{ref}). */
  commitOf(repo: GiteaRepo, ref: string): Promise<string>;
  logs(): string;
  stop(): Promise<void>;
}

export interface GiteaOptions {
  /** Address to listen on (default 127.0.0.1); pods on the test node reach its hostAddress. */
  address?: string;
  port?: number;
  signal?: AbortSignal;
}

/** The directory build-gitea.sh fills: `gitea` and the templates/options/public it serves from. */
export async function buildGitea(signal?: AbortSignal): Promise<string> {
  const { stdout } = await run("bash", [join(repoRoot, "dev/devcluster/src/build-gitea.sh")], {
    encoding: "utf8",
    maxBuffer: 16 << 20,
    signal,
  });
  const lines = stdout.trim().split("\n");
  return lines[lines.length - 1]!;
}

function appIni(dir: string, staticRoot: string, address: string, port: number): string {
  // Secrets given up front: Gitea would otherwise generate them and rewrite app.ini.
  const secret = (n: number) => randomBytes(n).toString("hex");
  const jwt = randomBytes(32).toString("base64url");
  const rootUrl = `http://${address}:${port}/`;
  return `APP_NAME = quarry-test
RUN_MODE = prod
WORK_PATH = ${dir}
${process.getuid?.() === 0 ? "I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true\n" : ""}
[server]
PROTOCOL = http
HTTP_ADDR = ${address}
HTTP_PORT = ${port}
ROOT_URL = ${rootUrl}
DOMAIN = ${address}
STATIC_ROOT_PATH = ${staticRoot}
APP_DATA_PATH = ${join(dir, "data")}
DISABLE_SSH = true
START_SSH_SERVER = false
OFFLINE_MODE = true
LFS_START_SERVER = false

[database]
DB_TYPE = sqlite3
PATH = ${join(dir, "data", "gitea.db")}

[repository]
ROOT = ${join(dir, "repos")}
DEFAULT_BRANCH = main

[security]
INSTALL_LOCK = true
SECRET_KEY = ${secret(32)}
INTERNAL_TOKEN = ${secret(40)}

[oauth2]
ENABLED = false
JWT_SECRET = ${jwt}

[mailer]
ENABLED = false

[service]
DISABLE_REGISTRATION = true

[actions]
ENABLED = false

[packages]
ENABLED = false

[indexer]
REPO_INDEXER_ENABLED = false

[cron]
ENABLED = false

[session]
PROVIDER = memory

[log]
MODE = console
LEVEL = info
`;
}

interface ApiRepo {
  name: string;
  full_name: string;
  clone_url: string;
  default_branch: string;
  owner: { login: string };
}

export async function startGitea(opts: GiteaOptions = {}): Promise<Gitea> {
  const out = await buildGitea(opts.signal);
  const bin = join(out, "gitea");
  const address = opts.address ?? "127.0.0.1";
  const port = opts.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), "quarry-gitea-"));
  const config = join(dir, "app.ini");
  writeFileSync(config, appIni(dir, out, address, port));
  const cli = ["--config", config, "--work-path", dir];
  const logFile = join(dir, "gitea.log");
  const fd = openSync(logFile, "a");
  const child = spawn(bin, [...cli, "web"], { stdio: ["ignore", fd, fd] });
  closeSync(fd);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const logs = () => readFileSync(logFile, "utf8");
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const baseUrl = `http://${address}:${port}`;
  const apiUrl = `${baseUrl}/api/v1`;

  const call = async <T>(method: string, path: string, body: unknown, authorization: string): Promise<T> => {
    const res = await fetch(`${apiUrl}${path}`, {
      method,
      headers: { authorization, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`gitea ${method} ${path}: ${res.status} ${text}`);
    return (text === "" ? undefined : JSON.parse(text)) as T;
  };
  const basic = (u: { username: string; password: string }) =>
    `Basic ${Buffer.from(`${u.username}:${u.password}`).toString("base64")}`;
  const newToken = async (u: { username: string; password: string }, scopes: string[]) => {
    const name = `quarry-${randomBytes(4).toString("hex")}`;
    const t = await call<{ sha1: string }>("POST", `/users/${u.username}/tokens`, { name, scopes }, basic(u));
    return t.sha1;
  };

  try {
    await waitUntil(
      "gitea API",
      async () => {
        if (child.exitCode !== null) throw new Error(`gitea exited:\n${logs().slice(-3000)}`);
        const res = await fetch(`${apiUrl}/version`).catch(() => undefined);
        return res?.ok ? true : undefined;
      },
      { timeoutMs: 60_000 },
    );
    // the web server has created the database; the CLI adds the first user to it
    const adminLogin = { username: "quarry-admin", password: `pw-${randomBytes(12).toString("hex")}` };
    await run(
      bin,
      [
        ...cli,
        "admin",
        "user",
        "create",
        "--admin",
        "--username",
        adminLogin.username,
        "--password",
        adminLogin.password,
        "--email",
        "quarry-admin@example.test",
        "--must-change-password=false",
      ],
      { encoding: "utf8", signal: opts.signal },
    );
    const admin: GiteaUser = { ...adminLogin, token: await newToken(adminLogin, ["all"]) };
    const api = <T>(method: string, path: string, body?: unknown, as: GiteaUser = admin) =>
      call<T>(method, path, body, `token ${as.token}`);
    const toRepo = (r: ApiRepo): GiteaRepo => ({
      owner: r.owner.login,
      name: r.name,
      fullName: r.full_name,
      cloneUrl: r.clone_url,
      defaultBranch: r.default_branch,
    });
    return {
      baseUrl,
      apiUrl,
      admin,
      api,
      logs,
      stop,
      async createUser(username, scopes = ["write:repository", "write:user"]) {
        const login = { username, password: `pw-${randomBytes(12).toString("hex")}` };
        await api("POST", "/admin/users", {
          username,
          password: login.password,
          email: `${username}@example.test`,
          must_change_password: false,
        });
        return { ...login, token: await newToken(login, scopes) };
      },
      async createRepo(name, { owner = admin, private: isPrivate = false } = {}) {
        const body = { name, auto_init: true, default_branch: "main", private: isPrivate };
        return toRepo(await api<ApiRepo>("POST", "/user/repos", body, owner));
      },
      async writeFile(repo, path, content, { branch, fromBranch, message, as = admin } = {}) {
        const target = branch ?? repo.defaultBranch;
        const route = `/repos/${repo.fullName}/contents/${path.split("/").map(encodeURIComponent).join("/")}`;
        const base64 = Buffer.from(content).toString("base64");
        const msg = message ?? `write ${path}`;
        // a file that exists where the commit starts is replaced (PUT with its blob sha)
        const source = fromBranch ?? target;
        const existing = await api<{ sha: string }>(
          "GET",
          `${route}?ref=${encodeURIComponent(source)}`,
          undefined,
          as,
        )
          .then((f) => f.sha)
          .catch(() => undefined);
        const body = {
          content: base64,
          message: msg,
          branch: source,
          ...(fromBranch ? { new_branch: target } : {}),
          ...(existing ? { sha: existing } : {}),
        };
        const res = await api<{ content: { path: string; sha: string }; commit: { sha: string } }>(
          existing ? "PUT" : "POST",
          route,
          body,
          as,
        );
        return { path: res.content.path, commit: res.commit.sha, blob: res.content.sha };
      },
      async commitOf(repo, ref) {
        const c = await api<{ sha: string }>(
          "GET",
          `/repos/${repo.fullName}/git/commits/${encodeURIComponent(ref)}`,
        );
        return c.sha;
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
