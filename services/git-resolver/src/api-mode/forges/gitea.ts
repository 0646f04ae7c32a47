// Gitea's REST API v1 (its swagger at /api/swagger): GET /repos/{owner}/{repo}/git/commits/{sha}
// (a branch, tag or commit → sha), /repos/{owner}/{repo}/contents/{path}?ref= (base64 content),
// /repos/{owner}/{repo} (clone_url). Tokens go as `Authorization: token <t>`.
import type { ForgeKind } from "./forge.ts";
import { openReposApi } from "./repos-api.ts";

export const gitea: ForgeKind = {
  apiBase: (serverUrl) => `${serverUrl}/api/v1`,
  authHeader: (token) => ["authorization", `token ${token}`],
  open: (apiBase, org, repo, http) => openReposApi(apiBase, org, repo, http, "git/commits"),
};
