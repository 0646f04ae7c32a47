// The demo's git side: the dev cluster's smart-HTTP git server (git
// http-backend behind node:http, in this process) serving one small catalog
// repository, built at demo time with the fixture's repository builder, so the
// git resolver fetches over the same protocol it would from a forge.
import { join } from "node:path";
import { RepoBuilder } from "@quarry/devcluster/git-repos";
import { type GitServer, startGitServer } from "@quarry/devcluster/git-server";
import type { Narrator } from "./narrator.ts";
import type { Teardown } from "./teardown.ts";

export const HELLO_PATH = "tasks/hello.yaml";
export const HELLO_TAG = "v1";

/** Short enough that `quarry describe` shows all of it (it previews 10 lines). */
export const HELLO_TASK = `apiVersion: tekton.dev/v1
kind: Task
metadata:
  name: hello
spec:
  steps:
    - name: hello
      image: busybox
      script: echo "hello from git"
`;

export const WAIT_PATH = "tasks/wait.yaml";

/** A definition for a Wait run to reference remotely: its default duration is what the run waits. */
export const WAIT_TASK = `apiVersion: tekton.dev/v1
kind: Task
metadata:
  name: wait
spec:
  params:
    - name: duration
      default: "2s"
  steps:
    - name: wait
      image: busybox
      script: sleep 2
`;

export interface DemoRepo {
  server: GitServer;
  /** What a request's `url` param names, e.g. http://127.0.0.1:41234/catalog.git */
  url: string;
  /** The bare repository the server serves (push to it to change what resolves). */
  bare: string;
  /** main's tip, which HELLO_TAG also names. */
  commit: string;
}

/** Serves `<dir>/git/catalog.git`; the directory goes with `dir`, the server with the teardown. */
export async function startDemoGit(dir: string, teardown: Teardown, n: Narrator): Promise<DemoRepo> {
  const server = await startGitServer({ root: join(dir, "git") });
  teardown.add("the git server", async () => {
    await server.stop();
    n.sayAlways("git server stopped");
  });
  const repo = await RepoBuilder.create(server.root, "catalog.git");
  try {
    repo.write(HELLO_PATH, HELLO_TASK);
    repo.write(WAIT_PATH, WAIT_TASK);
    const commit = await repo.commit("Add the hello Task");
    await repo.tag(HELLO_TAG);
    await repo.push();
    return { server, url: server.url(repo.name), bare: repo.bare, commit };
  } finally {
    // the work tree was only needed to make the commit; the server reads the bare repository
    repo.dispose();
  }
}

/**
 * What the git server answered since entry `from` of its log, e.g.
 * "4 HTTP requests: 2 capability advertisements, ls-refs ×2": shows that a
 * resolution is real git traffic, and (no fetch) when the resolver's cache spared one.
 */
export function trafficSince(server: Pick<GitServer, "log">, from: number): string {
  const entries = server.log.slice(from);
  if (entries.length === 0) return "no requests";
  const commands = new Map<string, number>();
  let adverts = 0;
  for (const e of entries) {
    // protocol v2: a GET of info/refs advertises capabilities, each POST runs one command
    if (e.command) commands.set(e.command, (commands.get(e.command) ?? 0) + 1);
    else if (e.method === "GET") adverts++;
  }
  const parts = [...commands].map(([c, k]) => (k > 1 ? `${c} ×${k}` : c));
  if (adverts > 0) parts.unshift(`${adverts} capability advertisement${adverts > 1 ? "s" : ""}`);
  return `${entries.length} HTTP request${entries.length > 1 ? "s" : ""}: ${parts.join(", ")}`;
}
