// One small interface over the forges' REST APIs: what API mode needs from a forge is a
// commit for a ref, a file at a commit and the repository's clone URL. Each forge module builds
// its requests and reads its answers; the HTTP (egress, token, status → reason) is ForgeHttp's.

/** What a request is for, so a failed answer names the param at fault. */
export interface Ask {
  param: "repo" | "revision" | "pathInRepo";
  /** e.g. `revision "main" of tektoncd/catalog`. */
  what: string;
}

/** GETs JSON from the forge through the resolver's egress; throws a ResolutionError or a transient Error. */
export interface ForgeHttp {
  getJson(url: URL, ask: Ask): Promise<unknown>;
}

export interface ForgeFile {
  data: Uint8Array;
  /** The path as the forge reports it. */
  path: string;
}

export interface Forge {
  /** The full commit id a branch, tag or commit names. */
  commitOf(ref: string): Promise<string>;
  /** The file's bytes at a commit. */
  readFile(commit: string, path: string): Promise<ForgeFile>;
  /** The repository's http clone URL (Tekton's url annotation and refSource). */
  cloneUrl(): Promise<string>;
}

export interface ForgeKind {
  /** Where the API is for a server URL (the address tokens and requests go to). */
  apiBase(serverUrl: string): string;
  /** The header that carries a token, as the forge's API description and go-scm send it. */
  authHeader(token: string): [name: string, value: string];
  open(apiBase: string, org: string, repo: string, http: ForgeHttp): Forge;
}

/** Reads a string field of a JSON object answer, or fails naming what was asked. */
export function field(body: unknown, name: string, ask: Ask): string {
  const v = body !== null && typeof body === "object" ? (body as Record<string, unknown>)[name] : undefined;
  if (typeof v !== "string" || v === "")
    throw new ForgeAnswerError(`${ask.what}: the answer has no "${name}"`);
  return v;
}

/** Decodes base64 file content; only base64 is accepted. */
export function base64Content(body: unknown, ask: Ask): Uint8Array {
  const encoding = field(body, "encoding", ask);
  if (encoding !== "base64")
    throw new ForgeAnswerError(
      `${ask.what}: content comes as ${JSON.stringify(encoding)}, not base64 (too large for the contents API?)`,
    );
  const content = (body as Record<string, unknown>).content;
  if (typeof content !== "string") throw new ForgeAnswerError(`${ask.what}: the answer has no "content"`);
  return new Uint8Array(Buffer.from(content, "base64"));
}

/** An answer that does not have the shape the API description gives. */
export class ForgeAnswerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ForgeAnswerError";
  }
}

/** A path's segments URL-encoded one by one (slashes kept). */
export function encodePath(path: string): string {
  return path.split("/").map(encodeURIComponent).join("/");
}
