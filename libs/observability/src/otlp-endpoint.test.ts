import assert from "node:assert/strict";
import { test } from "node:test";
import { otlpTracesUrl } from "./otlp-endpoint.ts";

test("no endpoint variable: nothing is exported", () => {
  assert.equal(otlpTracesUrl({}), undefined);
  assert.equal(otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "  " }), undefined);
});

test("the generic endpoint gets the traces path, with or without a trailing slash", () => {
  assert.equal(otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }), "http://c:4318/v1/traces");
  assert.equal(
    otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/otlp/" }),
    "http://c:4318/otlp/v1/traces",
  );
});

test("the traces endpoint is used as written and wins over the generic one", () => {
  assert.equal(
    otlpTracesUrl({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://generic:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example/custom",
    }),
    "https://traces.example/custom",
  );
});
