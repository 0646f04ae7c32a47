// The demo's http side: the harness's HTTP server on loopback (the one the
// http resolver's e2e scenarios fetch from) serving one Task file, so the http
// resolver fetches it over plain HTTP as it would from any web server, and a
// `digest` param pins what it may return.
import { createHash } from "node:crypto";
import { type HttpFixture, startHttpFixture } from "@quarry/harness/http-server";
import type { Narrator } from "./narrator.ts";
import type { Teardown } from "./teardown.ts";

export const LINT_PATH = "/tasks/lint.yaml";

/** Short enough that `quarry describe` shows all of it. */
export const LINT_TASK = `apiVersion: tekton.dev/v1
kind: Task
metadata:
  name: lint
spec:
  steps:
    - name: lint
      image: busybox
      script: echo "hello over http"
`;

/** What the file held before: a digest taken then no longer matches what the server serves. */
export const LINT_TASK_BEFORE = LINT_TASK.replace("hello over http", "hello over http, v0");

export const sha256 = (text: string): string =>
  `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;

export interface WebEntry {
  method: string;
  path: string;
  status: number;
}

export interface DemoWeb {
  server: HttpFixture;
  /** What a request's `url` param names, e.g. http://127.0.0.1:41234/tasks/lint.yaml */
  url: string;
  /** `sha256:<hex>` of the bytes the server serves at `url`. */
  digest: string;
  /** Every request the server answered, in arrival order. */
  log: WebEntry[];
}

/** Starts the server (stopped by the teardown) serving LINT_TASK at LINT_PATH. */
export async function startDemoWeb(teardown: Teardown, n: Narrator): Promise<DemoWeb> {
  const server = await startHttpFixture();
  teardown.add("the web server", async () => {
    await server.close();
    n.sayAlways("web server stopped");
  });
  const log: WebEntry[] = [];
  server.route(LINT_PATH, (req, res) => {
    log.push({ method: req.method ?? "GET", path: LINT_PATH, status: 200 });
    res.writeHead(200, { "content-type": "application/x-yaml" }).end(LINT_TASK);
  });
  return { server, url: `${server.base}${LINT_PATH}`, digest: sha256(LINT_TASK), log };
}

/** What the web server answered, e.g. "1 HTTP request: GET /tasks/lint.yaml (200)". */
export function webTraffic(entries: readonly WebEntry[]): string {
  if (entries.length === 0) return "no requests";
  const parts = entries.map((e) => `${e.method} ${e.path} (${e.status})`);
  return `${entries.length} HTTP request${entries.length > 1 ? "s" : ""}: ${parts.join(", ")}`;
}
