import assert from "node:assert/strict";
import { test } from "node:test";
import { parseReleaseArgs } from "./args.ts";

test("the registry, and the version from VERSION unless given", () => {
  assert.deepEqual(parseReleaseArgs(["10.0.0.5:5000"], "0.1.0"), {
    registry: "10.0.0.5:5000",
    version: "0.1.0",
    out: "dist/release/0.1.0",
    plainHttp: false,
    dockerfile: false,
  });
  const a = parseReleaseArgs(
    ["ghcr.io/acme", "1.2.3-rc.1", "--plain-http", "--out", "/tmp/r", "--dockerfile"],
    "0.1.0",
  );
  assert.deepEqual(a, {
    registry: "ghcr.io/acme",
    version: "1.2.3-rc.1",
    out: "/tmp/r",
    plainHttp: true,
    dockerfile: true,
  });
});

test("refused: no registry, a scheme, a version that is not semver, an unknown flag, a flag without value", () => {
  for (const [argv, message] of [
    [[], /usage/],
    [["https://ghcr.io"], /not host\[:port\]/],
    [["ghcr.io", "v1"], /not a semantic version/],
    [["ghcr.io", "--sign"], /unknown flag --sign/],
    [["ghcr.io", "--out"], /--out needs a value/],
    [["ghcr.io", "1.0.0", "extra"], /usage/],
  ] as const)
    assert.throws(() => parseReleaseArgs(argv, "0.1.0"), message, argv.join(" "));
});
