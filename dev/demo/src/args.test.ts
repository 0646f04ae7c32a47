import assert from "node:assert/strict";
import { test } from "node:test";
import { DemoUsageError, parseDemoArgs } from "./args.ts";

test("the demo takes --keep and -h, nothing else", () => {
  assert.deepEqual(parseDemoArgs([]), { keep: false });
  assert.deepEqual(parseDemoArgs(["--keep"]), { keep: true });
  assert.equal(parseDemoArgs(["-h"]), "help");
  for (const [argv, message] of [
    [["-n", "x"], /Unknown option '-n'/],
    [["--kind", "Run"], /Unknown option '--kind'/],
    [["extra"], /takes no arguments/],
  ] as const) {
    assert.throws(
      () => parseDemoArgs(argv),
      (e: unknown) => e instanceof DemoUsageError && message.test(e.message),
      argv.join(" "),
    );
  }
});
