import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { request } from "node:https";
import { test } from "node:test";
import { connect } from "node:tls";
import { RESOLUTION_V1ALPHA1, RESOLUTION_V1BETA1 } from "@quarry/api";
import { createLogger } from "@quarry/observability";
import { renewCertificates } from "./certs.ts";
import { MAX_REVIEW_BYTES, startConversionWebhook } from "./server.ts";

const log = createLogger({ service: "test", level: "silent" });
const HOSTS = ["localhost", "127.0.0.1"];

function post(port: number, ca: string, body: string): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: "/convert",
        method: "POST",
        ca,
        servername: "localhost",
        headers: { "content-type": "application/json" },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString()) }),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

function servedCert(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, ca, servername: "localhost" }, () => {
      const fp = socket.getPeerX509Certificate()?.fingerprint256 ?? "";
      socket.end();
      resolve(fp);
    });
    socket.on("error", reject);
  });
}

test("POST /convert over TLS answers the review; a new certificate is served without a restart", async () => {
  const now = new Date();
  const a = await renewCertificates(undefined, { action: "issue", reason: "t" }, HOSTS, now);
  const server = await startConversionWebhook({ port: 0, host: "127.0.0.1", tls: a.serving, log });
  try {
    const res = await post(
      server.port,
      a.caBundle,
      JSON.stringify({
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "ConversionReview",
        request: {
          uid: "u1",
          desiredAPIVersion: RESOLUTION_V1ALPHA1,
          objects: [
            {
              apiVersion: RESOLUTION_V1BETA1,
              kind: "ResolutionRequest",
              metadata: { name: "r", namespace: "n" },
              spec: { params: [{ name: "p", value: ["x"] }] },
            },
          ],
        },
      }),
    );
    assert.equal(res.status, 200);
    const body = res.json as {
      response: { uid: string; result: { status: string }; convertedObjects: { spec: unknown }[] };
    };
    assert.equal(body.response.uid, "u1");
    assert.equal(body.response.result.status, "Success");
    assert.deepEqual(body.response.convertedObjects[0]?.spec, { params: { p: '["x"]' } });
    assert.equal((await post(server.port, a.caBundle, "{}")).status, 400);

    assert.equal(
      await servedCert(server.port, a.caBundle),
      new X509Certificate(a.serving.certPem).fingerprint256,
    );
    const b = await renewCertificates(a, { action: "renew-serving", reason: "t" }, HOSTS, now);
    server.setCertificate(b.serving);
    assert.equal(
      await servedCert(server.port, b.caBundle),
      new X509Certificate(b.serving.certPem).fingerprint256,
    );
  } finally {
    await server.close();
  }
});

/**
 * POSTs `declared` bytes as Content-Length (or chunked, when undefined) and writes `body` in 64 KiB
 * chunks until the server answers; resolves with the status and whether it asked to close.
 */
function postUntilAnswered(
  port: number,
  ca: string,
  body: Buffer,
  declared: number | undefined,
): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: "/convert",
        method: "POST",
        ca,
        servername: "localhost",
        headers: {
          "content-type": "application/json",
          ...(declared === undefined ? {} : { "content-length": String(declared) }),
        },
      },
      (res) => {
        answered = true;
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
      },
    );
    // the server may close while we still write: only an error before any answer counts
    req.on("error", (err) => {
      if (!answered) reject(err);
    });
    const write = (offset: number) => {
      if (answered || offset >= body.length) return;
      req.write(body.subarray(offset, offset + 65536), () => setImmediate(write, offset + 65536));
    };
    write(0);
  });
}

function review(paramBytes: number): string {
  return JSON.stringify({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "ConversionReview",
    request: {
      uid: "big",
      desiredAPIVersion: RESOLUTION_V1ALPHA1,
      objects: [
        {
          apiVersion: RESOLUTION_V1BETA1,
          kind: "ResolutionRequest",
          metadata: { name: "r", namespace: "n" },
          spec: { params: [{ name: "p", value: "x".repeat(paramBytes) }] },
        },
      ],
    },
  });
}

test("a review over MAX_REVIEW_BYTES is answered 413 unread, by length or streamed; a 3 MiB object converts", async () => {
  const a = await renewCertificates(undefined, { action: "issue", reason: "t" }, HOSTS, new Date());
  const server = await startConversionWebhook({ port: 0, host: "127.0.0.1", tls: a.serving, log });
  try {
    // the apiserver's largest write: one object of 3 MiB, in its review
    const largest = review(3 * 1024 * 1024 - 1024);
    assert.ok(Buffer.byteLength(largest) <= MAX_REVIEW_BYTES);
    const ok = await post(server.port, a.caBundle, largest);
    assert.equal(ok.status, 200);
    assert.equal((ok.json as { response: { result: { status: string } } }).response.result.status, "Success");

    const over = Buffer.from(review(MAX_REVIEW_BYTES));
    // declared too long: refused from the header, before a byte of the body is read
    const byLength = await postUntilAnswered(server.port, a.caBundle, over.subarray(0, 1024), over.length);
    assert.deepEqual(byLength, { status: 413, connection: "close" });
    // chunked, no length: refused once the limit is passed
    const streamed = await postUntilAnswered(server.port, a.caBundle, over, undefined);
    assert.deepEqual(streamed, { status: 413, connection: "close" });

    // still serving
    assert.equal((await post(server.port, a.caBundle, review(10))).status, 200);
  } finally {
    await server.close();
  }
});
