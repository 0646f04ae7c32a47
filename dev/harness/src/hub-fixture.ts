// A protocol fixture of the two hub APIs, not a hub: a real HTTP server on
// loopback that answers the endpoints Tekton's hub resolver calls, with the
// paths, JSON fields and status codes it reads, from an in-memory catalog.
//
// Artifact Hub (its published API, /api/v1/packages/{kind}/{repo}/{package}[/{version}]):
//   the package JSON: `available_versions` [{version, contains_security_update, prerelease, ts}],
//   `version`, `repository` {name, url}, and `data.manifestRaw` (the resource's YAML); a package or
//   version it lacks is 404 with Artifact Hub's error body {"message": ""}.
// Tekton Hub (/v1/resource/{catalog}/{kind}/{name}[/{version}/yaml]):
//   `data.versions` [{id, version}] and `data.yaml`; 404 with the goa error body Tekton Hub sends.
// Anything else Artifact Hub or Tekton Hub serve (search, logos, ratings) is absent. Every request is
// recorded; `unavailable` makes every answer a 503 (a hub that is down but listening).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface HubFixtureVersion {
  version: string;
  /** Artifact Hub's prerelease flag (Tekton Hub has none). */
  prerelease?: boolean;
  yaml: string;
}

export interface HubFixtureEntry {
  hub: "artifact" | "tekton";
  /** Artifact Hub: the repository name; Tekton Hub: the catalog name. */
  catalog: string;
  kind: "task" | "pipeline" | "stepaction";
  name: string;
  versions: HubFixtureVersion[];
}

export interface HubFixture {
  base: string;
  /** Every request's path and query, in arrival order. */
  requests: string[];
  add(entry: HubFixtureEntry): void;
  /** Overrides one exact path (an oversized or malformed answer). */
  route(path: string, handler: (req: IncomingMessage, res: ServerResponse) => void): void;
  /** When true every request is answered 503 Service Unavailable. */
  unavailable: boolean;
  close(): Promise<void>;
}

const TEKTON_KIND = { task: "Task", pipeline: "Pipeline", stepaction: "StepAction" } as const;

export async function startHubFixture(opts: { address?: string } = {}): Promise<HubFixture> {
  const entries: HubFixtureEntry[] = [];
  const routes = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();
  const requests: string[] = [];
  const fixture = { unavailable: false } as HubFixture;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://fixture");
    requests.push(url.pathname + url.search);
    if (fixture.unavailable) return void res.writeHead(503).end("hub down\n");
    const override = routes.get(url.pathname);
    if (override) return override(req, res);
    if (req.method !== "GET") return void res.writeHead(405).end();
    const parts = url.pathname.split("/").slice(1).map(decodeURIComponent);
    if (parts[0] === "api" && parts[1] === "v1" && parts[2] === "packages")
      return artifactHub(entries, parts.slice(3), res);
    if (parts[0] === "v1" && parts[1] === "resource") return tektonHub(entries, parts.slice(2), res);
    res.writeHead(404, { "content-type": "text/plain" }).end("404 page not found\n");
  });
  const address = opts.address ?? "127.0.0.1";
  await new Promise<void>((r) => server.listen(0, address, r));
  return Object.assign(fixture, {
    base: `http://${address}:${(server.address() as AddressInfo).port}`,
    requests,
    add: (entry: HubFixtureEntry) => void entries.push(entry),
    route: (path: string, handler: (req: IncomingMessage, res: ServerResponse) => void) =>
      void routes.set(path, handler),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  });
}

const json = (res: ServerResponse, status: number, body: unknown): void =>
  void res.writeHead(status, { "content-type": "application/json" }).end(`${JSON.stringify(body)}\n`);

/** Artifact Hub's not-found answer: its error body carries an empty message for 404. */
const artifactNotFound = (res: ServerResponse) => json(res, 404, { message: "" });

/** /api/v1/packages/tekton-{kind}/{repo}/{package}[/{version}] */
function artifactHub(entries: HubFixtureEntry[], parts: string[], res: ServerResponse): void {
  const [packageKind, repo, name, version, ...rest] = parts;
  const kind = packageKind?.startsWith("tekton-") ? packageKind.slice("tekton-".length) : undefined;
  const entry = entries.find(
    (e) => e.hub === "artifact" && e.kind === kind && e.catalog === repo && e.name === name,
  );
  if (!entry || rest.length > 0) return void artifactNotFound(res);
  // without a version: the latest release, as Artifact Hub answers
  const releases = entry.versions.filter((v) => !v.prerelease);
  const chosen = version === undefined ? releases.at(-1) : entry.versions.find((v) => v.version === version);
  if (!chosen) return void artifactNotFound(res);
  json(res, 200, {
    package_id: `fixture-${entry.catalog}-${entry.name}`,
    name: entry.name,
    normalized_name: entry.name,
    version: chosen.version,
    prerelease: chosen.prerelease ?? false,
    available_versions: entry.versions.map((v, i) => ({
      version: v.version,
      contains_security_update: false,
      prerelease: v.prerelease ?? false,
      ts: 1_700_000_000 + i,
    })),
    repository: { name: entry.catalog, url: `https://example.invalid/${entry.catalog}` },
    data: { manifestRaw: chosen.yaml, pipelines_min_version: "0.17.0", platforms: ["linux/amd64"] },
  });
}

/** Tekton Hub's not-found answer: goa's error body. */
const tektonNotFound = (res: ServerResponse, message: string) =>
  json(res, 404, {
    name: "not-found",
    id: "fixture",
    message,
    temporary: false,
    timeout: false,
    fault: false,
  });

/** /v1/resource/{catalog}/{kind}/{name}[/{version}/yaml] */
function tektonHub(entries: HubFixtureEntry[], parts: string[], res: ServerResponse): void {
  const [catalog, kind, name, version, yaml, ...rest] = parts;
  const entry = entries.find(
    (e) => e.hub === "tekton" && e.catalog === catalog && e.kind === kind && e.name === name,
  );
  if (!entry || rest.length > 0 || (version !== undefined && yaml !== "yaml"))
    return void tektonNotFound(res, "resource not found");
  if (version === undefined) {
    const latest = entry.versions.at(-1);
    return void json(res, 200, {
      data: {
        id: 1,
        name: entry.name,
        catalog: { id: 1, name: entry.catalog, type: "community" },
        kind: TEKTON_KIND[entry.kind],
        latestVersion: latest && { id: entry.versions.length, version: latest.version },
        versions: entry.versions.map((v, i) => ({ id: i + 1, version: v.version })),
      },
    });
  }
  const chosen = entry.versions.find((v) => v.version === version);
  if (!chosen) return void tektonNotFound(res, "resource version not found");
  json(res, 200, { data: { yaml: chosen.yaml } });
}
