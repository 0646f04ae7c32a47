import assert from "node:assert/strict";
import { test } from "node:test";
import { createLogger } from "@quarry/observability";
import { untilAnswered } from "./startup.ts";

const log = createLogger({ service: "startup-test", level: "silent" });

test("untilAnswered retries until the call succeeds", async () => {
  let calls = 0;
  const value = await untilAnswered(
    "discovery",
    async () => {
      calls++;
      if (calls < 3) throw new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED") });
      return "served";
    },
    { log, backoff: { baseMs: 1, maxMs: 2 } },
  );
  assert.equal(value, "served");
  assert.equal(calls, 3);
});

test("untilAnswered gives up with the last error once the signal aborts", async () => {
  const abort = new AbortController();
  let calls = 0;
  await assert.rejects(
    untilAnswered(
      "discovery",
      async () => {
        calls++;
        if (calls === 2) abort.abort();
        throw new Error(`refused ${calls}`);
      },
      { log, signal: abort.signal, backoff: { baseMs: 1, maxMs: 2 } },
    ),
    /refused 2/,
  );
});
