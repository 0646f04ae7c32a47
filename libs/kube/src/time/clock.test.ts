import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { realClock } from "./clock.ts";

describe("realClock", () => {
  it("cancelled timers do not fire", async () => {
    let fired = false;
    const cancel = realClock.setTimer(1, () => {
      fired = true;
    });
    cancel();
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(fired, false);
  });

  it("fires a timer and reports monotonic time", async () => {
    const start = realClock.now();
    await new Promise<void>((r) => realClock.setTimer(1, r));
    assert.ok(realClock.now() >= start);
  });
});
