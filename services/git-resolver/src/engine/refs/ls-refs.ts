// Protocol v2 `ls-refs` in ONE HTTP request: a stateless POST to
// <url>/git-upload-pack with `Git-Protocol: version=2`, every candidate ref
// prefix in the one command. isomorphic-git's listServerRefs asks for the
// capability advertisement (GET info/refs) before each ls-refs; the
// advertisement only tells what the server speaks, which ref-discovery.ts
// learns once per URL and remembers. Pure pkt-line encoding and parsing here
// (unit-tested); the POST in postLsRefs.
import type { Agent as HttpAgent } from "node:http";
import { type Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { nodeHttp } from "@quarry/kube";
import type { ServerRef } from "./revision.ts";

const AGENT = "git/quarry-git-resolver";
/** ls-refs with prefixes answers a handful of lines; anything much larger is not what was asked. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

function pkt(line: string): string {
  const len = Buffer.byteLength(line) + 4;
  return len.toString(16).padStart(4, "0") + line;
}

/** The request body: command, capabilities, delimiter, arguments, flush. */
export function lsRefsBody(prefixes: readonly string[], format: "sha1" | "sha256"): string {
  return [
    pkt("command=ls-refs\n"),
    pkt(`agent=${AGENT}\n`),
    // only a sha256 repository needs telling; older servers refuse capabilities they do not know
    ...(format === "sha256" ? [pkt("object-format=sha256\n")] : []),
    "0001",
    pkt("peel\n"),
    ...prefixes.map((p) => pkt(`ref-prefix ${p}\n`)),
    "0000",
  ].join("");
}

/**
 * The refs of an ls-refs answer ("<oid> <ref>[ peeled:<oid>]" per pkt-line,
 * then a flush), or an Error naming what is wrong with it.
 */
export function parseLsRefs(body: Buffer): ServerRef[] | Error {
  const refs: ServerRef[] = [];
  let at = 0;
  while (at + 4 <= body.length) {
    const len = Number.parseInt(body.subarray(at, at + 4).toString("latin1"), 16);
    if (!Number.isInteger(len) || (len > 0 && len < 4)) return new Error("malformed pkt-line");
    if (len === 0) return refs;
    if (at + len > body.length) return new Error("truncated pkt-line");
    const line = body
      .subarray(at + 4, at + len)
      .toString("utf8")
      .replace(/\n$/, "");
    at += len;
    if (line.startsWith("ERR ")) return new Error(line.slice(4));
    const [oid, ref, ...attrs] = line.split(" ");
    if (!oid || !ref || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(oid))
      return new Error("unexpected ls-refs line");
    const peeled = attrs.find((a) => a.startsWith("peeled:"))?.slice("peeled:".length);
    refs.push(peeled ? { ref, oid, peeled } : { ref, oid });
  }
  return new Error("no flush at the end of the answer");
}

export interface LsRefsPost {
  url: string;
  prefixes: readonly string[];
  format: "sha1" | "sha256";
  authorization?: string | undefined;
  agent: HttpAgent | HttpsAgent;
  signal: AbortSignal;
}

/** What the server said: refs, an HTTP refusal to classify, or an answer that is not v2 (caller falls back). */
export type LsRefsAnswer =
  | { kind: "refs"; refs: ServerRef[] }
  /** A 3xx: never followed (ref-discovery.ts says why), so the caller refuses it. */
  | { kind: "redirect"; from: string; location: string }
  | { kind: "http-error"; status: number }
  | { kind: "not-v2"; why: string };

export function postLsRefs(p: LsRefsPost): Promise<LsRefsAnswer> {
  const target = new URL(`${p.url.replace(/\/+$/, "")}/git-upload-pack`);
  const body = lsRefsBody(p.prefixes, p.format);
  const send = target.protocol === "https:" ? httpsRequest : nodeHttp.request;
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      {
        method: "POST",
        agent: p.agent,
        signal: p.signal,
        headers: {
          "content-type": "application/x-git-upload-pack-request",
          accept: "application/x-git-upload-pack-result",
          "git-protocol": "version=2",
          "user-agent": AGENT,
          "content-length": String(Buffer.byteLength(body)),
          ...(p.authorization ? { authorization: p.authorization } : {}),
        },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const type = String(res.headers["content-type"] ?? "");
        if (status !== 200 || !type.startsWith("application/x-git-upload-pack-result")) {
          res.resume();
          const location = res.headers.location;
          if (status >= 300 && status < 400 && location)
            resolve({ kind: "redirect", from: target.toString(), location });
          else if ([401, 403, 404, 410].includes(status)) resolve({ kind: "http-error", status });
          else resolve({ kind: "not-v2", why: `HTTP ${status} ${type}` });
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > MAX_ANSWER_BYTES) {
            res.destroy();
            resolve({ kind: "not-v2", why: "answer too large" });
            return;
          }
          chunks.push(c);
        });
        res.on("error", reject);
        res.on("end", () => {
          const parsed = parseLsRefs(Buffer.concat(chunks));
          resolve(
            parsed instanceof Error
              ? { kind: "not-v2", why: parsed.message }
              : { kind: "refs", refs: parsed },
          );
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
