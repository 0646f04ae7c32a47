// A private control plane whose ResolutionRequest CRD serves v1alpha1 through the lifecycle
// controller's conversion webhook, as the charts set it up with conversionWebhook enabled: the
// empty Secret, rbac.yaml's webhook rules bound to the controller's ServiceAccount, the controller
// self-issuing its certificate and injecting the CA bundle (the test provides none). The apiserver
// reaches the host process by URL (https://127.0.0.1:<port>/convert), the one difference from a
// Service in a cluster. Private: changing the CRD restarts its watches on the shared control plane.
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import {
  RESOLUTION_V1ALPHA1,
  type ResolutionRequestV1Alpha1,
  resolutionRequestCrdWithConversion,
} from "@quarry/api";
import { applyObject } from "@quarry/devcluster/apply";
import { type ControlPlane, freePort, startControlPlane } from "@quarry/devcluster/controlplane";
import { installQuarryApi, installTektonCrds } from "@quarry/devcluster/install";
import { kinds } from "@quarry/devcluster/kinds";
import { repoRoot } from "@quarry/devcluster/paths";
import { waitUntil } from "@quarry/devcluster/wait";
import { isApiError, type KubeObject, type ResourceType } from "@quarry/kube";
import yaml from "js-yaml";
import { adminClient } from "./env.ts";
import { newScenario, type Scenario } from "./scenario.ts";

export const resolutionRequestsV1Alpha1: ResourceType = {
  group: "resolution.tekton.dev",
  version: "v1alpha1",
  plural: "resolutionrequests",
  kind: "ResolutionRequest",
  namespaced: true,
};

export const WEBHOOK_SECRET = "quarry-lifecycle-controller-webhook-tls";
const RR_CRD = "resolutionrequests.resolution.tekton.dev";

export interface ConversionCluster {
  cp: ControlPlane;
  scn: Scenario;
  webhookPort: number;
  stop(): Promise<void>;
}

interface CrdObject extends KubeObject {
  spec: { conversion?: { webhook?: { clientConfig?: { caBundle?: string } } } };
}

/** The injected caBundle of the RR CRD, decoded ("" when none). */
export async function injectedCaBundle(scn: Scenario): Promise<string> {
  const crd = await scn.admin.get<CrdObject>(kinds.CustomResourceDefinition!, undefined, RR_CRD);
  return Buffer.from(crd.spec.conversion?.webhook?.clientConfig?.caBundle ?? "", "base64").toString();
}

export async function startConversionCluster(
  prefix: string,
  services: string[] = [],
): Promise<ConversionCluster> {
  const cp = await startControlPlane();
  const info = { server: cp.server, caFile: cp.caFile, dir: cp.dir, adminKubeconfig: cp.adminKubeconfig };
  let scn: Scenario | undefined;
  try {
    const admin = adminClient(info);
    await installQuarryApi(admin);
    await installTektonCrds(admin);
    const webhookPort = await freePort();
    // the chart's CRD with clientConfig.url for the service, and no caBundle: the controller injects it
    await applyObject(
      admin,
      resolutionRequestCrdWithConversion({ url: `https://127.0.0.1:${webhookPort}/convert` }),
    );
    scn = await newScenario(prefix, { cp: info });
    const s = scn;
    await applyObject(s.admin, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: WEBHOOK_SECRET, namespace: s.namespace },
      type: "Opaque",
    });
    const sa = (await s.identity("lifecycle-controller")).serviceAccount;
    await bindWebhookRules(s, sa);
    await s.start("lifecycle-controller", {
      QUARRY_CONVERSION_WEBHOOK: "on",
      QUARRY_CONVERSION_WEBHOOK_PORT: String(webhookPort),
      QUARRY_CONVERSION_WEBHOOK_HOST: "127.0.0.1",
      QUARRY_CONVERSION_WEBHOOK_HOSTS: "127.0.0.1,localhost",
      QUARRY_CONVERSION_WEBHOOK_RESYNC: "2s",
    });
    for (const service of services) await s.start(service);
    await waitUntil(
      "the webhook converts (CA bundle injected, its port listening, v1alpha1 readable)",
      async () => {
        if ((await injectedCaBundle(s)) === "") return false;
        // an empty namespace's v1alpha1 list needs no conversion: it alone does not show the webhook up
        if (!(await accepts(webhookPort))) return false;
        try {
          await s.admin.list(resolutionRequestsV1Alpha1, s.namespace);
          return true;
        } catch (err) {
          if (isApiError(err)) return false;
          throw err;
        }
      },
      { timeoutMs: 60_000 },
    );
    return {
      cp,
      scn: s,
      webhookPort,
      stop: async () => {
        await s.cleanup();
        await cp.stop();
      },
    };
  } catch (err) {
    await scn?.cleanup().catch(() => {});
    await cp.stop();
    throw err;
  }
}

/** Whether something accepts TCP connections on the loopback port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** rbac.yaml's conversionWebhook*Rules bound as the lifecycle chart binds them with the webhook on. */
async function bindWebhookRules(scn: Scenario, sa: string): Promise<void> {
  const rbac = yaml.load(
    readFileSync(join(repoRoot, "charts", "lifecycle-controller", "rbac.yaml"), "utf8"),
  ) as {
    conversionWebhookClusterRules: unknown[];
    conversionWebhookNamespaceRules: unknown[];
  };
  const name = "quarry-lifecycle-controller-webhook";
  const subjects = [{ kind: "ServiceAccount", name: sa, namespace: scn.namespace }];
  const rbacApi = "rbac.authorization.k8s.io/v1";
  await applyObject(scn.admin, {
    apiVersion: rbacApi,
    kind: "ClusterRole",
    metadata: { name },
    rules: rbac.conversionWebhookClusterRules,
  });
  await applyObject(scn.admin, {
    apiVersion: rbacApi,
    kind: "ClusterRoleBinding",
    metadata: { name },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
    subjects,
  });
  await applyObject(scn.admin, {
    apiVersion: rbacApi,
    kind: "Role",
    metadata: { name, namespace: scn.namespace },
    rules: rbac.conversionWebhookNamespaceRules,
  });
  await applyObject(scn.admin, {
    apiVersion: rbacApi,
    kind: "RoleBinding",
    metadata: { name, namespace: scn.namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
    subjects,
  });
}

/** A request as a v1alpha1 (seed-era) client writes it: params a string map. */
export function newRequestV1Alpha1(
  namespace: string,
  name: string,
  labels: Record<string, string>,
  params: Record<string, string>,
): ResolutionRequestV1Alpha1 {
  return {
    apiVersion: RESOLUTION_V1ALPHA1,
    kind: "ResolutionRequest",
    metadata: { name, namespace, labels },
    spec: { params },
  };
}
