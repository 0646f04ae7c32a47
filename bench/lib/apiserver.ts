// Reads kube-apiserver's own request counter (apiserver_request_total) so a
// benchmark can say how many API calls of each kind a run cost, and which
// ones were refused (e.g. 409 conflicts).
import { readFileSync } from "node:fs";
import { request } from "node:https";
import { promSamples } from "./prom.ts";

export interface ApiserverAccess {
  server: string;
  caFile: string;
  adminToken: string;
}

function get(url: string, ca: Buffer, token: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { ca, headers: { Authorization: `Bearer ${token}` }, timeout: 10_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const body = Buffer.concat(chunks).toString("utf8");
          if (res.statusCode === 200) resolve(body);
          else reject(new Error(`GET ${url}: HTTP ${res.statusCode}: ${body.slice(0, 200)}`));
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.on("timeout", () => req.destroy(new Error(`GET ${url}: timed out`)));
    req.end();
  });
}

/**
 * apiserver_request_total for one resource, keyed "VERB[/subresource] code"
 * (e.g. "PATCH/status 409"). Watches count when they start, not per event.
 */
export async function requestCounts(access: ApiserverAccess, resource: string): Promise<Map<string, number>> {
  const text = await get(`${access.server}/metrics`, readFileSync(access.caFile), access.adminToken);
  const counts = new Map<string, number>();
  for (const { labels, value } of promSamples(text, "apiserver_request_total", { resource })) {
    const key = `${labels.verb}${labels.subresource ? `/${labels.subresource}` : ""} ${labels.code}`;
    counts.set(key, (counts.get(key) ?? 0) + value);
  }
  return counts;
}

/** after − before, dropping zeroes, sorted by key. */
export function diffCounts(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const key of [...after.keys()].sort()) {
    const d = (after.get(key) ?? 0) - (before.get(key) ?? 0);
    if (d !== 0) out[key] = d;
  }
  return out;
}
