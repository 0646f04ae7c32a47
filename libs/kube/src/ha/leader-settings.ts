// Leader election settings from the environment (the chart's leaderElection
// values become these variables). Off by default: a single replica owns every
// key, as before buckets existed, and touches no Lease.
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { parseDuration } from "../config/duration.ts";
import { MAX_BUCKETS } from "./bucket-hash.ts";
import { checkLeaseTiming, DEFAULT_LEASE_TIMING, type LeaseTiming } from "./elector.ts";

export interface LeaderElectionSettings {
  enabled: boolean;
  /** Number of buckets (Leases) the keys are split into. */
  buckets: number;
  /** Who this replica is in holderIdentity: unique among the replicas. */
  identity: string;
  timing: LeaseTiming;
  /** QUARRY_LEASE_OWNER_CONFIGMAP: the ConfigMap that owns the bucket Leases (the chart's). */
  ownerConfigMap?: string;
  /**
   * QUARRY_SHARD_LABEL: bucketed caches select their buckets' shards by the label quarry.dev/shard
   * (on only where Quarry's shard policies stamp and guard it: a wrong value would hide a request).
   */
  shardLabel?: boolean;
}

/**
 * QUARRY_BUCKETS (default 1, at most 64); QUARRY_LEADER_ELECTION `on`/`off` (default: on when
 * there is more than one bucket); QUARRY_LEASE_DURATION, QUARRY_LEASE_RENEW_DEADLINE,
 * QUARRY_LEASE_RETRY_PERIOD (Go durations, default 15s/10s/2s); QUARRY_SHARD_LABEL `on`/`off`
 * (default off); identity POD_NAME, else the host
 * name plus a random suffix (two processes on one host must never share an identity).
 * Invalid values throw: a replica that guesses could lead beside one that does not.
 */
export function leaderElectionFromEnv(env: NodeJS.ProcessEnv): LeaderElectionSettings {
  const buckets = parseBuckets(env.QUARRY_BUCKETS);
  const enabled = parseSwitch("QUARRY_LEADER_ELECTION", env.QUARRY_LEADER_ELECTION) ?? buckets > 1;
  const shardLabel = parseSwitch("QUARRY_SHARD_LABEL", env.QUARRY_SHARD_LABEL) ?? false;
  const duration = (name: string, fallback: number) => {
    const text = env[name];
    if (text === undefined || text === "") return fallback;
    try {
      return parseDuration(text);
    } catch (err) {
      throw new Error(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  const timing: LeaseTiming = {
    leaseDurationMs: duration("QUARRY_LEASE_DURATION", DEFAULT_LEASE_TIMING.leaseDurationMs),
    renewDeadlineMs: duration("QUARRY_LEASE_RENEW_DEADLINE", DEFAULT_LEASE_TIMING.renewDeadlineMs),
    retryPeriodMs: duration("QUARRY_LEASE_RETRY_PERIOD", DEFAULT_LEASE_TIMING.retryPeriodMs),
  };
  if (enabled) checkLeaseTiming(timing);
  const identity = env.POD_NAME || `${hostname()}_${randomBytes(4).toString("hex")}`;
  const ownerConfigMap = env.QUARRY_LEASE_OWNER_CONFIGMAP?.trim() || undefined;
  return {
    enabled,
    buckets,
    identity,
    timing,
    ...(ownerConfigMap && { ownerConfigMap }),
    ...(shardLabel && { shardLabel }),
  };
}

function parseBuckets(text: string | undefined): number {
  if (text === undefined || text.trim() === "") return 1;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > MAX_BUCKETS)
    throw new Error(`QUARRY_BUCKETS: expected a whole number from 1 to ${MAX_BUCKETS}, got "${text}"`);
  return n;
}

function parseSwitch(name: string, text: string | undefined): boolean | undefined {
  const t = text?.trim().toLowerCase();
  if (t === undefined || t === "") return undefined;
  if (t === "on" || t === "true") return true;
  if (t === "off" || t === "false") return false;
  throw new Error(`${name}: expected on or off, got "${text}"`);
}
