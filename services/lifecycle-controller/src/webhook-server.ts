// The conversion webhook's TLS server: fastify on its own port (apart from the ops server's
// /metrics and probes), POST /convert answered by reviewConversion. The certificate is swapped in
// place (setSecureContext) when it is renewed: new connections get the new one, no restart.
import type { Server as HttpsServer } from "node:https";
import type { Logger } from "@quarry/observability";
import { fastify } from "fastify";
import { reviewConversion } from "./conversion-review.ts";
import type { CertAndKey } from "./webhook-pki.ts";

export const CONVERT_PATH = "/convert";

// A list read through v1alpha1 sends every object in one review, each up to etcd's 1.5 MiB.
const BODY_LIMIT_BYTES = 256 * 1024 * 1024;

export interface ConversionWebhookServer {
  port: number;
  setCertificate(tls: CertAndKey): void;
  close(): Promise<void>;
}

export async function startConversionWebhook(opts: {
  port: number;
  host: string;
  tls: CertAndKey;
  log: Logger;
}): Promise<ConversionWebhookServer> {
  const log = opts.log.child({ component: "conversion-webhook" });
  const app = fastify({
    https: { cert: opts.tls.certPem, key: opts.tls.keyPem },
    bodyLimit: BODY_LIMIT_BYTES,
    loggerInstance: log.child({}, { level: "warn" }),
  });
  app.post(CONVERT_PATH, async (req, reply) => {
    const outcome = reviewConversion(req.body);
    if (outcome.status === 200 && outcome.body.response.result.status === "Failure") {
      log.warn(
        { uid: outcome.body.response.uid, message: outcome.body.response.result.message },
        "conversion failed",
      );
    } else if (outcome.status === 200) {
      log.debug(
        { uid: outcome.body.response.uid, objects: outcome.body.response.convertedObjects.length },
        "converted",
      );
    }
    reply.code(outcome.status);
    return outcome.body;
  });
  await app.listen({ port: opts.port, host: opts.host });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : opts.port;
  log.info({ port, path: CONVERT_PATH }, "conversion webhook listening (TLS)");
  return {
    port,
    setCertificate: (tls) => {
      (app.server as unknown as HttpsServer).setSecureContext({ cert: tls.certPem, key: tls.keyPem });
      log.info("conversion webhook certificate reloaded");
    },
    close: () => app.close(),
  };
}
