import assert from "node:assert/strict";
import { test } from "node:test";
import {
  canonicalResolverName,
  LABEL_RESOLVER_ALIAS,
  LABEL_RESOLVER_TYPE,
  resolverTypeOf,
} from "./labels.ts";

test("canonical label wins and needs no patch", () => {
  assert.deepEqual(resolverTypeOf({ [LABEL_RESOLVER_TYPE]: "git", [LABEL_RESOLVER_ALIAS]: "bundle" }), {
    type: "git",
    canonicalLabelMissingOrWrong: false,
  });
});

test("alias label is used when the canonical one is missing or blank", () => {
  assert.deepEqual(resolverTypeOf({ [LABEL_RESOLVER_ALIAS]: "git" }), {
    type: "git",
    canonicalLabelMissingOrWrong: true,
  });
  assert.deepEqual(resolverTypeOf({ [LABEL_RESOLVER_TYPE]: "  ", [LABEL_RESOLVER_ALIAS]: "git" }), {
    type: "git",
    canonicalLabelMissingOrWrong: true,
  });
});

test("alias names map to canonical names, on either label", () => {
  assert.deepEqual(resolverTypeOf({ [LABEL_RESOLVER_ALIAS]: "bundle" }), {
    type: "bundles",
    canonicalLabelMissingOrWrong: true,
  });
  assert.deepEqual(resolverTypeOf({ [LABEL_RESOLVER_TYPE]: "in-cluster" }), {
    type: "cluster",
    canonicalLabelMissingOrWrong: true,
  });
  assert.equal(canonicalResolverName("pipe"), "pipe");
  assert.equal(canonicalResolverName("toString"), "toString"); // no prototype lookups
});

test("whitespace is trimmed, and an untrimmed canonical label needs a patch", () => {
  assert.deepEqual(resolverTypeOf({ [LABEL_RESOLVER_TYPE]: " git " }), {
    type: "git",
    canonicalLabelMissingOrWrong: true,
  });
});

test("no label, empty labels or only blank values: no type", () => {
  const none = { type: undefined, canonicalLabelMissingOrWrong: true };
  assert.deepEqual(resolverTypeOf(undefined), none);
  assert.deepEqual(resolverTypeOf({}), none);
  assert.deepEqual(resolverTypeOf({ [LABEL_RESOLVER_TYPE]: "", [LABEL_RESOLVER_ALIAS]: " " }), none);
  assert.deepEqual(resolverTypeOf({ app: "git" }), none);
});
