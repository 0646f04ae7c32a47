// Where the webhook's certificates live and how the apiserver learns to trust them: the self-issued
// ones in a Secret every replica shares (written with optimistic locking, so two replicas renewing
// at once agree on one winner), their CA bundle injected into the CRD's conversion clientConfig;
// or, with cert-manager, files of a mounted Secret that cert-manager renews and its cainjector injects.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { isApiError, type KubeClient, type ResourceType, secrets } from "@quarry/kube";
import type { Logger } from "@quarry/observability";
import {
  bundle,
  DEFAULT_ROTATION,
  decideCertificates,
  type RotationPolicy,
  renewCertificates,
  type WebhookCerts,
} from "./certs.ts";
import type { CertAndKey } from "./pki.ts";
import { splitPem } from "./pki.ts";

export const customResourceDefinitions: ResourceType = {
  group: "apiextensions.k8s.io",
  version: "v1",
  plural: "customresourcedefinitions",
  kind: "CustomResourceDefinition",
  namespaced: false,
};

/** The Secret's keys: cert-manager's names for the serving pair and its CA, plus the CA key and the bundle. */
export const SECRET_KEYS = {
  cert: "tls.crt",
  key: "tls.key",
  caCert: "ca.crt",
  caKey: "ca.key",
  caBundle: "ca-bundle.crt",
} as const;

/** Where the serving certificate comes from; sync() is called at start and every resync period. */
export interface ServingCertSource {
  sync(): Promise<CertAndKey>;
}

interface Secret {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  type?: string;
  data?: Record<string, string>;
}

interface Crd {
  metadata: { name: string };
  spec: { conversion?: { strategy?: string; webhook?: { clientConfig?: { caBundle?: string } } } };
}

export interface SecretCertKeeperOptions {
  client: KubeClient;
  namespace: string;
  secretName: string;
  /** The CRD whose conversion clientConfig gets the CA bundle; none when undefined. */
  crdName: string | undefined;
  hosts: string[];
  log: Logger;
  now?: () => Date;
  policy?: RotationPolicy;
}

/** Self-issued certificates kept in a Secret (created empty by the chart), the CA bundle injected into the CRD. */
export class SecretCertKeeper implements ServingCertSource {
  private readonly o: SecretCertKeeperOptions;
  private warnedStrategy = false;

  constructor(options: SecretCertKeeperOptions) {
    this.o = options;
  }

  async sync(): Promise<CertAndKey> {
    const { client, namespace, secretName, hosts, log } = this.o;
    const now = (this.o.now ?? (() => new Date()))();
    const policy = this.o.policy ?? DEFAULT_ROTATION;
    for (let attempt = 1; ; attempt++) {
      const secret = await client.get<Secret>(secrets, namespace, secretName).catch((err: unknown) => {
        if (isApiError(err, 404))
          throw new Error(
            `Secret ${namespace}/${secretName} is missing: the chart creates it (empty) for the webhook`,
          );
        throw err;
      });
      const current = fromSecretData(secret.data);
      const decision = decideCertificates(current, hosts, now, policy);
      const next = await renewCertificates(current, decision, hosts, now, policy);
      const data = toSecretData(next);
      if (!sameData(secret.data, data)) {
        // trusted before anyone serves with it: the CRD gets the new CA beside whatever it trusts now
        await this.inject(next.caBundle, { keepCurrent: true, now });
        try {
          await client.replace<Secret>(secrets, { ...secret, data });
        } catch (err) {
          // another replica renewed first: take its certificates
          if (isApiError(err, 409) && attempt < 3) continue;
          throw err;
        }
        if (decision.action !== "keep")
          log.info(
            { secret: secretName, reason: decision.reason },
            `webhook certificates: ${decision.action}`,
          );
      }
      await this.inject(next.caBundle, { keepCurrent: false, now });
      return next.serving;
    }
  }

  /** Sets the CRD's caBundle to `caBundle` (plus, with keepCurrent, the unexpired CAs it has now). */
  private async inject(caBundle: string, opts: { keepCurrent: boolean; now: Date }): Promise<void> {
    const { client, crdName, log } = this.o;
    if (!crdName) return;
    const crd = await client.get<Crd>(customResourceDefinitions, undefined, crdName);
    const conversion = crd.spec.conversion;
    if (conversion?.strategy !== "Webhook") {
      if (!this.warnedStrategy)
        log.warn(
          { crd: crdName },
          "the CRD does not convert by webhook: no CA bundle injected (charts/quarry-crds: resolutionRequests.conversionWebhook.enabled)",
        );
      this.warnedStrategy = true;
      return;
    }
    this.warnedStrategy = false;
    const had = Buffer.from(conversion.webhook?.clientConfig?.caBundle ?? "", "base64").toString("utf8");
    const want = opts.keepCurrent ? bundle([...splitPem(caBundle), ...splitPem(had)], opts.now) : caBundle;
    if (want === had) return;
    await client.mergePatch(customResourceDefinitions, undefined, crdName, {
      spec: { conversion: { webhook: { clientConfig: { caBundle: Buffer.from(want).toString("base64") } } } },
    });
    log.info(
      { crd: crdName, cas: splitPem(want).length },
      "CA bundle injected into the CRD's conversion webhook",
    );
  }
}

/** cert-manager's Secret mounted as files (tls.crt, tls.key); cert-manager renews, kubelet updates the files. */
export class FileCertSource implements ServingCertSource {
  private readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  async sync(): Promise<CertAndKey> {
    const [certPem, keyPem] = await Promise.all([
      readFile(join(this.dir, SECRET_KEYS.cert), "utf8"),
      readFile(join(this.dir, SECRET_KEYS.key), "utf8"),
    ]);
    return { certPem, keyPem };
  }
}

export function fromSecretData(data: Record<string, string> | undefined): WebhookCerts | undefined {
  const get = (key: string) => (data?.[key] ? Buffer.from(data[key], "base64").toString("utf8") : undefined);
  const [cert, key, caCert, caKey] = [
    get(SECRET_KEYS.cert),
    get(SECRET_KEYS.key),
    get(SECRET_KEYS.caCert),
    get(SECRET_KEYS.caKey),
  ];
  if (!cert || !key || !caCert || !caKey) return undefined;
  return {
    ca: { certPem: caCert, keyPem: caKey },
    serving: { certPem: cert, keyPem: key },
    caBundle: get(SECRET_KEYS.caBundle) ?? caCert,
  };
}

export function toSecretData(certs: WebhookCerts): Record<string, string> {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  return {
    [SECRET_KEYS.cert]: b64(certs.serving.certPem),
    [SECRET_KEYS.key]: b64(certs.serving.keyPem),
    [SECRET_KEYS.caCert]: b64(certs.ca.certPem),
    [SECRET_KEYS.caKey]: b64(certs.ca.keyPem),
    [SECRET_KEYS.caBundle]: b64(certs.caBundle),
  };
}

function sameData(a: Record<string, string> | undefined, b: Record<string, string>): boolean {
  const keys = new Set([...Object.keys(a ?? {}), ...Object.keys(b)]);
  return [...keys].every((k) => a?.[k] === b[k]);
}
