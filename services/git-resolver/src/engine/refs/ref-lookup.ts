// The pipeline's first step, ref → commit: the commit a branch, tag or ref
// names on the remote now, asked of the server in one request
// (ref-discovery.ts). Concurrent lookups of one ref by one tenant with one
// credential share a server round trip (fresh-coalescer.ts), and an answer
// proves the credentials can read the repository (access.ts).
import { createHash } from "node:crypto";
import { credentialHash } from "../credentials.ts";
import type { SourceRequest } from "../source.ts";
import type { SourceStats } from "../stats.ts";
import type { AccessProofs } from "./access.ts";
import { FreshCoalescer } from "./fresh-coalescer.ts";
import type { RefDiscovery } from "./ref-discovery.ts";
import type { Revision } from "./revision.ts";

export interface RefLookupOptions {
  discovery: RefDiscovery;
  access: AccessProofs;
  stats: Pick<SourceStats, "refLookups">;
}

export class RefLookup {
  private readonly shared = new FreshCoalescer<string>();
  private readonly opts: RefLookupOptions;

  constructor(opts: RefLookupOptions) {
    this.opts = opts;
  }

  async resolve(
    url: string,
    revision: Extract<Revision, { kind: "ref" }>,
    req: SourceRequest,
  ): Promise<string> {
    // a lookup that started after this request arrived answers it (FreshCoalescer): never staler
    // than asking alone; the key holds everything the answer may depend on, credentials hashed
    const key = JSON.stringify([
      url,
      revision.name,
      req.scope ?? "",
      credentialHash(req),
      req.proxy ?? "",
      req.caBundle ? createHash("sha256").update(req.caBundle).digest("hex") : "",
      req.blockedNetworks?.text ?? "",
    ]);
    const lookup = (signal: AbortSignal) => {
      this.opts.stats.refLookups++;
      return this.opts.discovery.resolve(url, revision.name, { ...req, signal });
    };
    const commit = await this.shared.run(key, req.signal, lookup, req.refLookupIntervalMs);
    this.opts.access.record(url, req);
    return commit;
  }
}
