// The conversion webhook's TLS server: fastify on its own port (apart from the ops server's
// /metrics and probes), POST /convert answered by reviewConversion. The certificate is swapped in
// place (setSecureContext) when it is renewed: new connections get the new one, no restart.
import type { Server as HttpsServer } from "node:https";
import type { Logger } from "@quarry/observability";
import { fastify } from "fastify";
import { reviewConversion } from "./conversion-review.ts";
import type { CertAndKey } from "./pki.ts";

export const CONVERT_PATH = "/convert";

/**
 * The largest ConversionReview body read; a longer one is answered 413 before it is buffered or
 * parsed (the port is reachable by more than the apiserver: a NetworkPolicy admits any source, as
 * the apiserver's address is not known in general). The apiserver converts an object at a time,
 * as it decodes one from etcd or a write (each served version has its own watch cache, filled
 * already converted), so a review carries one object: at most 1.5 MiB stored (etcd's request
 * limit) and 3 MiB on a write (the apiserver's own request-body limit). 3 MiB, and 64 KiB for the
 * review around the object and the metadata the apiserver adds to it.
 */
export const MAX_REVIEW_BYTES = 3 * 1024 * 1024 + 64 * 1024;

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
    bodyLimit: MAX_REVIEW_BYTES,
    loggerInstance: log.child({}, { level: "warn" }),
  });
  app.setErrorHandler((err: { statusCode?: number }, req, reply) => {
    if (err.statusCode === 413) {
      // never the apiserver's (its reviews fit): a client to notice; the rest of the body unread
      log.warn(
        { remote: req.ip, limit: MAX_REVIEW_BYTES },
        "conversion review over the body limit refused (413)",
      );
      reply.header("connection", "close");
    }
    return reply.send(err);
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
