import assert from "node:assert/strict";
import { test } from "node:test";
import { ParamsValidator, ResolutionError } from "@quarry/resolver-sdk";
import { defaultBundleConfig } from "./config.ts";
import { validateParams } from "./generated/params-validator.js";
import { paramsSchema, parseRequest, pinsContent } from "./params.ts";

const D = `sha256:${"b".repeat(64)}`;

test("defaults: kind from config, lower-cased", () => {
  const r = parseRequest({ bundle: "127.0.0.1:5000/ns/b:v1", name: "build" }, defaultBundleConfig);
  assert.equal(r.kind, "task");
  assert.equal(r.ref.repository, "ns/b");
  assert.equal(
    parseRequest({ bundle: "r.io/a", name: "x", kind: "Pipeline" }, defaultBundleConfig).kind,
    "pipeline",
  );
  assert.equal(
    parseRequest({ bundle: "r.io/a", name: "x" }, { ...defaultBundleConfig, defaultKind: "stepaction" }).kind,
    "stepaction",
  );
});

const bad: [Record<string, string>, RegExp][] = [
  [{ bundle: "", name: "x" }, /param "bundle" is required/],
  [{ bundle: "r.io/A", name: "x" }, /param "bundle": repository/],
  [{ bundle: "r.io/a", name: " " }, /param "name" is required/],
  [{ bundle: "r.io/a", name: "x", secret: "Bad_Name" }, /param "secret"/],
  [{ bundle: "r.io/a", name: "x", serviceAccount: "a/b" }, /param "serviceAccount"/],
  // the password is not echoed: the message goes to the status, an Event and the log
  [
    { bundle: "ci:pw-s3cret@r.io/a:v1", name: "x" },
    /^param "bundle": must not contain credentials; name a pull Secret/,
  ],
  [{ bundle: "pw-s3cret@r.io/a:v1", name: "x" }, /^param "bundle": must not contain credentials[^@]*$/],
];
for (const [params, want] of bad) {
  test(`parseRequest refuses ${JSON.stringify(params)}`, () => {
    assert.throws(
      () => parseRequest(params, defaultBundleConfig),
      (e: unknown) => e instanceof ResolutionError && e.reason === "InvalidParams" && want.test(e.message),
    );
  });
}

test("only @sha256 references pin content", () => {
  assert.equal(pinsContent({ bundle: `r.io/a@${D}` }), true);
  assert.equal(pinsContent({ bundle: `r.io/a:v1@${D}` }), true);
  assert.equal(pinsContent({ bundle: "r.io/a:v1" }), false);
  assert.equal(pinsContent({ bundle: "r.io/A@x" }), false);
});

test("the params schema caps lengths, so a megabyte param is refused before any registry call", () => {
  const v = new ParamsValidator(paramsSchema, validateParams);
  assert.match(
    v.check({ bundle: "r.io/a", name: "x".repeat(254) }) ?? "",
    /param "name" must NOT have more than 253/,
  );
  assert.match(
    v.check({ bundle: `r.io/${"a".repeat(5000)}`, name: "x" }) ?? "",
    /param "bundle" must NOT have more than 4096/,
  );
  assert.equal(v.check({ bundle: "r.io/a", name: "x".repeat(253) }), undefined);
});
