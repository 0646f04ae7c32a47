// The test node's pod network, as small as a real one can be on one machine:
// Debian's CNI bridge plugin with host-local IPAM puts every non-hostNetwork
// pod on bridge quarry0 (198.18.0.0/24; the host is 198.18.0.1). Nothing is
// masqueraded or forwarded (ip_forward stays off): pods reach the host and each
// other, never beyond. 198.18.0.0/15 is not a private range (TEST-CLUSTER.md:
// traffic to 10/8, 172.16/12 and 192.168/16 is flagged here).
//
// No kube-proxy runs. In-cluster clients dial the kubernetes Service
// (KUBERNETES_SERVICE_HOST/PORT, which the kubelet injects from its ClusterIP),
// so that one address, 198.18.1.1:443, is put on loopback and forwarded to the
// apiserver: the only Service whose ClusterIP answers. The apiserver's serving
// certificate names it (pki.ts); the control plane's service range holds it
// (controlplane.ts).
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export const POD_BRIDGE = "quarry0";
export const POD_SUBNET = "198.18.0.0/24";
/** The host on the pod network: servers pods must reach listen here. */
export const POD_GATEWAY = "198.18.0.1";
/** The kubernetes Service's ClusterIP: the first address of the control plane's service range. */
export const SERVICE_VIP = "198.18.1.1";
const SERVICE_PORT = 443;

export interface PodNetwork {
  stop(): Promise<void>;
}

/** The CNI network containerd gives pods: bridge + host-local IPAM with its state under `ipamDir`. */
export function writeCniConfig(confDir: string, ipamDir: string): void {
  const conf = {
    cniVersion: "1.0.0",
    name: "quarry-pods",
    plugins: [
      {
        type: "bridge",
        bridge: POD_BRIDGE,
        isGateway: true,
        // no iptables here, and nothing should leave the host
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: "host-local",
          dataDir: ipamDir,
          ranges: [[{ subnet: POD_SUBNET, gateway: POD_GATEWAY }]],
          routes: [{ dst: "0.0.0.0/0" }],
        },
      },
    ],
  };
  writeFileSync(join(confDir, "10-quarry-pods.conflist"), JSON.stringify(conf, null, 2));
}

const ip = (...args: string[]) => run("ip", args);

/** Removes the bridge (its veths go with their pods' namespaces) and the Service address; idempotent. */
export async function removePodNetwork(): Promise<void> {
  await ip("link", "del", POD_BRIDGE).catch(() => {});
  await ip("addr", "del", `${SERVICE_VIP}/32`, "dev", "lo").catch(() => {});
}

/**
 * Creates the bridge with the gateway address (so servers can bind to it before the first
 * pod), puts the Service address on loopback and forwards it to `apiserver` (https URL).
 */
export async function startPodNetwork(apiserver: string, log: (m: string) => void): Promise<PodNetwork> {
  await removePodNetwork();
  await ip("link", "add", POD_BRIDGE, "type", "bridge");
  await ip("addr", "add", `${POD_GATEWAY}/24`, "dev", POD_BRIDGE);
  await ip("link", "set", POD_BRIDGE, "up");
  await ip("addr", "add", `${SERVICE_VIP}/32`, "dev", "lo");
  const target = new URL(apiserver);
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(SERVICE_PORT, SERVICE_VIP, () => resolve());
  });
  log(
    `pod network ${POD_SUBNET} on ${POD_BRIDGE}; kubernetes Service ${SERVICE_VIP}:${SERVICE_PORT} → ${target.host}`,
  );
  return {
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
