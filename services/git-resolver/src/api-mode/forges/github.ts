// GitHub's REST API (docs.github.com/rest): GET /repos/{owner}/{repo}/commits/{ref} (sha),
// /repos/{owner}/{repo}/contents/{path}?ref= (base64 content), /repos/{owner}/{repo} (clone_url).
// The API of github.com is api.github.com; GitHub Enterprise serves it under /api/v3 (go-scm's rule).
import type { ForgeKind } from "./forge.ts";
import { openReposApi } from "./repos-api.ts";

export const github: ForgeKind = {
  apiBase(serverUrl) {
    const u = new URL(serverUrl);
    if (u.hostname === "github.com" || u.hostname === "api.github.com") return "https://api.github.com";
    return u.pathname.includes("/api/") || u.pathname.endsWith("/api/v3") ? serverUrl : `${serverUrl}/api/v3`;
  },
  authHeader: (token) => ["authorization", `Bearer ${token}`],
  open: (apiBase, org, repo, http) => openReposApi(apiBase, org, repo, http, "commits"),
};
