// GitLab's REST API v4 (docs.gitlab.com/api): the project named by its URL-encoded path;
// GET /projects/{id}/repository/commits/{ref} (id), /projects/{id}/repository/files/{path}?ref=
// (base64 content, file_path), /projects/{id} (http_url_to_repo). Tokens go in PRIVATE-TOKEN.
import { type Ask, base64Content, type ForgeKind, field } from "./forge.ts";

export const gitlab: ForgeKind = {
  apiBase: (serverUrl) => `${serverUrl}/api/v4`,
  authHeader: (token) => ["private-token", token],
  open(apiBase, org, repo, http) {
    const name = `${org}/${repo}`;
    const base = `${apiBase}/projects/${encodeURIComponent(name)}`;
    return {
      async commitOf(ref) {
        const ask: Ask = { param: "revision", what: `revision ${JSON.stringify(ref)} of ${name}` };
        const body = await http.getJson(
          new URL(`${base}/repository/commits/${encodeURIComponent(ref)}`),
          ask,
        );
        return field(body, "id", ask);
      },
      async readFile(commit, path) {
        const ask: Ask = { param: "pathInRepo", what: `${path} at ${commit} of ${name}` };
        const url = new URL(`${base}/repository/files/${encodeURIComponent(path)}?ref=${commit}`);
        const body = await http.getJson(url, ask);
        return { data: base64Content(body, ask), path: field(body, "file_path", ask) };
      },
      async cloneUrl() {
        const ask: Ask = { param: "repo", what: `project ${name}` };
        return field(await http.getJson(new URL(base), ask), "http_url_to_repo", ask);
      },
    };
  },
};
