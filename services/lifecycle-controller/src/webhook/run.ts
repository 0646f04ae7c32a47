// Wires the conversion webhook: the certificate source the settings name, the TLS server once a
// first certificate exists, and a resync that renews (self-issued) or re-reads (files) and swaps
// a changed certificate into the running server. The controllers never wait for any of it.
import type { KubeClient } from "@quarry/kube";
import type { Logger } from "@quarry/observability";
import type { WebhookSettings } from "./config.ts";
import type { CertAndKey } from "./pki.ts";
import { FileCertSource, SecretCertKeeper, type ServingCertSource } from "./secret.ts";
import type { ConversionWebhookServer } from "./server.ts";

const FIRST_SYNC_RETRY_MS = 5_000;

export interface RunningWebhook {
  /** Resolves with the server once it listens. */
  started: Promise<ConversionWebhookServer>;
  stop(): Promise<void>;
}

export function runConversionWebhook(
  settings: WebhookSettings,
  deps: { client: KubeClient; namespace: string; log: Logger },
): RunningWebhook {
  const log = deps.log.child({ component: "conversion-webhook" });
  const source: ServingCertSource =
    settings.certs === "files"
      ? new FileCertSource(settings.certDir)
      : new SecretCertKeeper({
          client: deps.client,
          namespace: deps.namespace,
          secretName: settings.secretName,
          crdName: settings.crdName,
          hosts: settings.hosts,
          log,
        });
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let server: ConversionWebhookServer | undefined;
  let serving: CertAndKey | undefined;

  const sync = async (): Promise<CertAndKey | undefined> => {
    try {
      return await source.sync();
    } catch (err) {
      log.error({ err, certs: settings.certs }, "webhook certificates: sync failed, retrying");
      return undefined;
    }
  };
  const resync = async () => {
    const next = await sync();
    if (next && server && (next.certPem !== serving?.certPem || next.keyPem !== serving?.keyPem)) {
      server.setCertificate(next);
      serving = next;
    }
    if (!stopped) timer = setTimeout(resync, settings.resyncMs).unref();
  };
  const started = (async () => {
    for (;;) {
      serving = await sync();
      if (serving || stopped) break;
      await new Promise((r) => setTimeout(r, FIRST_SYNC_RETRY_MS).unref());
    }
    if (!serving) throw new Error("stopped before the webhook had a certificate");
    // the TLS server's module (and the certificate code it pulls in) is imported only when the
    // webhook runs, which it does not by default (docs/performance.md, "Import costs")
    const { startConversionWebhook } = await import("./server.ts");
    server = await startConversionWebhook({
      port: settings.port,
      host: settings.host,
      tls: serving,
      log: deps.log,
    });
    if (!stopped) timer = setTimeout(resync, settings.resyncMs).unref();
    return server;
  })();
  started.catch((err: unknown) => log.error({ err }, "conversion webhook did not start"));
  return {
    started,
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await server?.close();
    },
  };
}
