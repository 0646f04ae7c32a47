import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FakeClock } from "./fake-clock.ts";

describe("FakeClock", () => {
  it("fires due timers in time order, with now() at each deadline", () => {
    const clock = new FakeClock(1000);
    const fired: Array<[string, number]> = [];
    clock.setTimer(30, () => fired.push(["c", clock.now()]));
    clock.setTimer(10, () => fired.push(["a", clock.now()]));
    clock.setTimer(20, () => fired.push(["b", clock.now()]));
    clock.setTimer(10, () => fired.push(["a2", clock.now()]));
    clock.setTimer(31, () => fired.push(["late", clock.now()]));
    clock.advance(30);
    assert.deepEqual(fired, [
      ["a", 1010],
      ["a2", 1010],
      ["b", 1020],
      ["c", 1030],
    ]);
    assert.equal(clock.now(), 1030);
    assert.equal(clock.pendingTimers(), 1);
    assert.equal(clock.nextTimerAt(), 1031);
  });

  it("fires timers scheduled by callbacks when they fall inside the window", () => {
    const clock = new FakeClock();
    const fired: number[] = [];
    clock.setTimer(10, () => {
      fired.push(clock.now());
      clock.setTimer(0, () => fired.push(clock.now()));
      clock.setTimer(5, () => {
        fired.push(clock.now());
        clock.setTimer(100, () => fired.push(clock.now()));
      });
    });
    clock.advance(20);
    assert.deepEqual(fired, [10, 10, 15]);
    assert.equal(clock.now(), 20);
    assert.equal(clock.pendingTimers(), 1);
    clock.advance(95);
    assert.deepEqual(fired, [10, 10, 15, 115]);
  });

  it("cancel prevents firing, also from within another callback, and is idempotent", () => {
    const clock = new FakeClock();
    const fired: string[] = [];
    const cancelB = clock.setTimer(20, () => fired.push("b"));
    clock.setTimer(10, () => {
      fired.push("a");
      cancelB();
    });
    const cancelC = clock.setTimer(5, () => fired.push("c"));
    cancelC();
    cancelC();
    clock.advance(100);
    assert.deepEqual(fired, ["a"]);
    assert.equal(clock.pendingTimers(), 0);
  });

  it("advance(0) fires zero-delay timers; negative advance is rejected", () => {
    const clock = new FakeClock();
    let fired = false;
    clock.setTimer(0, () => {
      fired = true;
    });
    clock.advance(0);
    assert.equal(fired, true);
    assert.throws(() => clock.advance(-1), RangeError);
  });
});
