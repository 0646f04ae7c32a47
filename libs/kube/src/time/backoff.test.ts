import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ExponentialBackoff, RetryDelay } from "./backoff.ts";

describe("ExponentialBackoff", () => {
  it("doubles from baseMs per failure and caps at maxMs (random fixed to 0)", () => {
    const b = new ExponentialBackoff({ maxMs: 1000, random: () => 0 });
    const seq = Array.from({ length: 8 }, () => b.next("k"));
    assert.deepEqual(seq, [50, 100, 200, 400, 800, 1000, 1000, 1000]);
    assert.equal(b.failures("k"), 8);
  });

  it("uses the documented defaults (50 ms base, 5 min cap)", () => {
    const b = new ExponentialBackoff({ random: () => 0 });
    let last = 0;
    for (let i = 0; i < 40; i++) last = b.next("k");
    assert.equal(last, 5 * 60_000);
  });

  it("tracks keys independently and forget resets one key", () => {
    const b = new ExponentialBackoff({ random: () => 0 });
    b.next("a");
    b.next("a");
    assert.equal(b.next("b"), 50);
    assert.equal(b.next("a"), 200);
    b.forget("a");
    assert.equal(b.failures("a"), 0);
    assert.equal(b.next("a"), 50);
    assert.equal(b.failures("b"), 1);
  });

  it("keeps jitter within [delay, delay * (1 + jitter)] and never above maxMs", () => {
    let r = 0;
    const values = [0, 0.25, 0.5, 0.999999, 1];
    const b = new ExponentialBackoff({
      baseMs: 100,
      maxMs: 1000,
      jitter: 0.1,
      random: () => values[r++ % 5]!,
    });
    for (let i = 0; i < 5; i++) {
      const d = b.next(`k${i}`);
      assert.ok(d >= 100 && d <= 110, `delay ${d} out of bounds`);
    }
    assert.equal(new ExponentialBackoff({ baseMs: 100, jitter: 0.1, random: () => 0.5 }).next("x"), 105);
    const capped = new ExponentialBackoff({
      baseMs: 100,
      maxMs: 150,
      factor: 2,
      jitter: 0.5,
      random: () => 1,
    });
    assert.equal(capped.next("k"), 150);
    assert.equal(capped.next("k"), 150);
  });

  it("stays finite for very many failures and handles baseMs 0", () => {
    const b = new ExponentialBackoff({ maxMs: 1000, random: () => 0 });
    for (let i = 0; i < 5000; i++) b.next("k");
    assert.equal(b.next("k"), 1000);
    const zero = new ExponentialBackoff({ baseMs: 0, random: () => 1 });
    for (let i = 0; i < 5000; i++) assert.equal(zero.next("k"), 0);
  });

  it("rejects invalid options", () => {
    assert.throws(() => new ExponentialBackoff({ baseMs: -1 }), RangeError);
    assert.throws(() => new ExponentialBackoff({ baseMs: 100, maxMs: 10 }), RangeError);
    assert.throws(() => new ExponentialBackoff({ factor: 0.5 }), RangeError);
    assert.throws(() => new ExponentialBackoff({ jitter: -0.1 }), RangeError);
    assert.throws(() => new ExponentialBackoff({ baseMs: Number.NaN }), RangeError);
  });
});

describe("RetryDelay", () => {
  it("grows, caps, and resets", () => {
    const d = new RetryDelay({ baseMs: 1000, maxMs: 30_000, random: () => 0 });
    assert.deepEqual(
      Array.from({ length: 7 }, () => d.next()),
      [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000],
    );
    assert.equal(d.attempts, 7);
    d.reset();
    assert.equal(d.attempts, 0);
    assert.equal(d.next(), 1000);
  });

  it("applies bounded jitter", () => {
    const d = new RetryDelay({ baseMs: 1000, maxMs: 30_000, jitter: 0.2, random: () => 0.5 });
    assert.equal(d.next(), 1100);
    assert.equal(d.next(), 2200);
  });
});
