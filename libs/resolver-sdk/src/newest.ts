// Which copy of a request a status write starts from. A write carries the
// resourceVersion it was computed from (optimistic locking), so starting from
// a stale copy costs a 409, a GET and a second PATCH: under a burst the
// reconcile's snapshot is usually older than the lifecycle controller's
// initialisation or this replica's own accepted-by stamp. The newest copy
// this replica holds (the snapshot, the informer's, the object its last write
// returned) avoids most of them. resourceVersions are compared as numbers
// (etcd's revisions) only to pick a starting point: a wrong pick costs the
// same 409 as before and is never a correctness question.
import type { ResolutionRequest } from "@quarry/api";

export function newestCopy(
  snapshot: ResolutionRequest,
  ...others: (ResolutionRequest | undefined)[]
): ResolutionRequest {
  let best = snapshot;
  for (const copy of others) {
    if (!copy || copy.metadata.uid !== snapshot.metadata.uid) continue;
    const a = revision(best);
    const b = revision(copy);
    if (a !== undefined && b !== undefined && b > a) best = copy;
  }
  return best;
}

function revision(rr: ResolutionRequest): bigint | undefined {
  const rv = rr.metadata.resourceVersion;
  return rv && /^\d{1,30}$/.test(rv) ? BigInt(rv) : undefined;
}
