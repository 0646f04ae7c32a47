// coordination.k8s.io/v1 Leases, the lock objects of leader election: the
// type, the resource, and a thin client whose writes always carry the
// resourceVersion they were computed from, so two replicas racing for one
// Lease cannot both win (the loser gets a 409).
import type { OwnerReference } from "@quarry/api";
import type { KubeClient, KubeObject } from "../client/client.ts";
import { isApiError } from "../client/errors.ts";
import type { ResourceType } from "../client/resources.ts";

export const leases: ResourceType = {
  group: "coordination.k8s.io",
  version: "v1",
  plural: "leases",
  kind: "Lease",
  namespaced: true,
};

/** Lease.spec as client-go's resource lock reads and writes it. Times are MicroTime strings. */
export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

/**
 * metav1.MicroTime as the apiserver parses it: RFC 3339 with exactly six fractional digits
 * (Go's parser rejects JavaScript's three-digit toISOString()).
 */
export function microTime(ms: number): string {
  return new Date(Math.floor(ms)).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/** Reads and writes Leases in one namespace; every write is one API call. */
export class LeaseClient {
  readonly namespace: string;
  /**
   * Set on every Lease this client creates: the object whose deletion should take the Leases
   * with it (the service's ConfigMap, so `helm uninstall` leaves no Lease behind).
   */
  owner: OwnerReference | undefined;
  private readonly client: KubeClient;

  constructor(client: KubeClient, namespace: string) {
    this.client = client;
    this.namespace = namespace;
  }

  /** The Lease, or undefined when there is none. */
  async get(name: string): Promise<Lease | undefined> {
    try {
      return await this.client.get<Lease>(leases, this.namespace, name);
    } catch (err) {
      if (isApiError(err, 404)) return undefined;
      throw err;
    }
  }

  list(labelSelector: string): Promise<Lease[]> {
    return this.client.list<Lease>(leases, this.namespace, { labelSelector }).then((l) => l.items);
  }

  /** Creates the Lease; a 409 AlreadyExists means someone else created it first. */
  create(name: string, spec: LeaseSpec, labels: Record<string, string>): Promise<Lease> {
    return this.client.create<Lease>(leases, {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: {
        name,
        namespace: this.namespace,
        labels,
        ...(this.owner && { ownerReferences: [this.owner] }),
      },
      spec,
    });
  }

  /** Replaces the spec of `current` under its resourceVersion: a 409 means it changed since it was read. */
  update(current: Lease, spec: LeaseSpec): Promise<Lease> {
    return this.client.replace<Lease>(leases, {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: current.metadata,
      spec,
    });
  }

  /** Deletes the Lease only if it is still at `current`'s resourceVersion. */
  delete(current: Lease): Promise<void> {
    return this.client.delete(leases, this.namespace, current.metadata.name ?? "", {
      apiVersion: "v1",
      kind: "DeleteOptions",
      preconditions: { resourceVersion: current.metadata.resourceVersion },
    });
  }
}
