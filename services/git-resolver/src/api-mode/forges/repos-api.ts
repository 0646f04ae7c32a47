// The `/repos/{owner}/{repo}` API GitHub and Gitea share: a ref to its commit sha at
// `commitsPath` (GitHub `commits`, Gitea `git/commits`), a file's base64 content at
// `contents/{path}?ref=`, and the repository's `clone_url`.
import {
  type Ask,
  base64Content,
  encodePath,
  type Forge,
  ForgeAnswerError,
  type ForgeHttp,
  field,
} from "./forge.ts";

export function openReposApi(
  apiBase: string,
  org: string,
  repo: string,
  http: ForgeHttp,
  commitsPath: string,
): Forge {
  const base = `${apiBase}/repos/${encodePath(org)}/${encodeURIComponent(repo)}`;
  const name = `${org}/${repo}`;
  return {
    async commitOf(ref) {
      const ask: Ask = { param: "revision", what: `revision ${JSON.stringify(ref)} of ${name}` };
      const body = await http.getJson(new URL(`${base}/${commitsPath}/${encodeURIComponent(ref)}`), ask);
      return field(body, "sha", ask);
    },
    async readFile(commit, path) {
      const ask: Ask = { param: "pathInRepo", what: `${path} at ${commit} of ${name}` };
      const body = await http.getJson(new URL(`${base}/contents/${encodePath(path)}?ref=${commit}`), ask);
      if (Array.isArray(body)) throw new ForgeAnswerError(`${ask.what}: is a directory, not a file`);
      const type = (body as { type?: unknown }).type;
      if (type !== undefined && type !== "file")
        throw new ForgeAnswerError(`${ask.what}: is a ${String(type)}, not a file`);
      return { data: base64Content(body, ask), path: field(body, "path", ask) };
    },
    async cloneUrl() {
      const ask: Ask = { param: "repo", what: `repository ${name}` };
      return field(await http.getJson(new URL(base), ask), "clone_url", ask);
    },
  };
}
