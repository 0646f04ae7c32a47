import assert from "node:assert/strict";
import { test } from "node:test";
import { withoutUrlPasswords } from "./config.ts";

test("the logged config hides URL passwords (a proxy's credentials), nothing else", () => {
  const raw = {
    proxy: "http://egress:s3cret@proxy.corp:3128",
    "team.proxy": "https://proxy.corp:3129",
    "default-url": "https://github.com/org/repo.git",
    nested: { list: ["http://u:p@h/x", "plain"] },
    pattern: /x/,
  };
  assert.deepEqual(withoutUrlPasswords(raw), {
    proxy: "http://egress:***@proxy.corp:3128",
    "team.proxy": "https://proxy.corp:3129",
    "default-url": "https://github.com/org/repo.git",
    nested: { list: ["http://u:***@h/x", "plain"] },
    pattern: /x/,
  });
  assert.ok(!JSON.stringify(withoutUrlPasswords(raw)).includes("s3cret"));
});
