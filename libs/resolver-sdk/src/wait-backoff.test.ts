import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError } from "@quarry/kube";
import { defaultRuntimeConfig, type LoadedConfig } from "./config.ts";
import { retrySchedule } from "./reconciler.ts";
import {
  backoffDelayMs,
  backoffSchedule,
  parseWaitBackoff,
  TEKTON_BACKOFF_DEFAULTS,
  type WaitBackoff,
} from "./wait-backoff.ts";

const none = () => 0;
const most = () => 0.999;

describe("parseWaitBackoff", () => {
  const cases: { name: string; data: Record<string, string>; want: WaitBackoff | undefined }[] = [
    { name: "no backoff key: the runtime's retries", data: { "max-attempts": "3" }, want: undefined },
    { name: "blank values count as unset", data: { "backoff-steps": " " }, want: undefined },
    {
      name: "one key: Tekton's defaults for the rest",
      data: { "backoff-steps": "4" },
      want: { ...TEKTON_BACKOFF_DEFAULTS, steps: 4 },
    },
    {
      name: "every key, Go formats",
      data: {
        "backoff-duration": "1m30s",
        "backoff-factor": "1.5",
        "backoff-jitter": "0",
        "backoff-steps": "+7",
        "backoff-cap": "0",
      },
      want: { durationMs: 90_000, factor: 1.5, jitter: 0, steps: 7, capMs: 0 },
    },
    {
      name: "sub-second durations, exponent floats, a plus sign",
      data: {
        "backoff-duration": "500ms",
        "backoff-factor": "2e0",
        "backoff-jitter": ".25",
        "backoff-cap": "+2s",
      },
      want: { durationMs: 500, factor: 2, jitter: 0.25, steps: 2, capMs: 2000 },
    },
    {
      name: "zero duration: attempts back to back",
      data: { "backoff-duration": "0", "backoff-steps": "3" },
      want: { ...TEKTON_BACKOFF_DEFAULTS, durationMs: 0, steps: 3 },
    },
  ];
  for (const c of cases) {
    it(c.name, () => assert.deepEqual(parseWaitBackoff(c.data), c.want));
  }

  const bad: { key: string; value: string }[] = [
    { key: "backoff-duration", value: "2" },
    { key: "backoff-duration", value: "-1s" },
    { key: "backoff-duration", value: "two seconds" },
    { key: "backoff-cap", value: "10 s" },
    { key: "backoff-factor", value: "-2" },
    { key: "backoff-factor", value: "NaN" },
    { key: "backoff-factor", value: "Inf" },
    { key: "backoff-jitter", value: "10%" },
    { key: "backoff-steps", value: "0" },
    { key: "backoff-steps", value: "2.5" },
    { key: "backoff-steps", value: "-1" },
    { key: "backoff-steps", value: "three" },
  ];
  for (const { key, value } of bad) {
    it(`${key}: "${value}" is a ConfigError naming the key`, () => {
      assert.throws(
        () => parseWaitBackoff({ [key]: value }),
        (err: unknown) => err instanceof ConfigError && err.key === key && err.message.includes(value),
      );
    });
  }
});

describe("backoffSchedule follows wait.Backoff", () => {
  const cases: { name: string; b: WaitBackoff; want: number[] }[] = [
    {
      name: "Tekton's defaults: two attempts, 2s apart",
      b: { ...TEKTON_BACKOFF_DEFAULTS, jitter: 0 },
      want: [2000],
    },
    {
      name: "grows by the factor, then holds at the cap",
      b: { durationMs: 2000, factor: 2, jitter: 0, steps: 6, capMs: 10_000 },
      want: [2000, 4000, 8000, 10_000, 10_000],
    },
    {
      name: "a first duration above the cap is used once, then the cap",
      b: { durationMs: 20_000, factor: 2, jitter: 0, steps: 4, capMs: 10_000 },
      want: [20_000, 10_000, 10_000],
    },
    {
      name: "no cap: unbounded growth",
      b: { durationMs: 100, factor: 3, jitter: 0, steps: 5, capMs: 0 },
      want: [100, 300, 900, 2700],
    },
    {
      name: "factor 0: a constant delay",
      b: { durationMs: 500, factor: 0, jitter: 0, steps: 4, capMs: 10_000 },
      want: [500, 500, 500],
    },
    {
      name: "factor below 1 shrinks",
      b: { durationMs: 1000, factor: 0.5, jitter: 0, steps: 4, capMs: 10_000 },
      want: [1000, 500, 250],
    },
    {
      name: "growth truncates to whole nanoseconds, as Go converts",
      b: { durationMs: 0.000003, factor: 1.5, jitter: 0, steps: 4, capMs: 0 },
      want: [0.000003, 0.000004, 0.000006],
    },
    { name: "one step: no retry", b: { ...TEKTON_BACKOFF_DEFAULTS, steps: 1 }, want: [] },
  ];
  for (const c of cases) {
    it(c.name, () => assert.deepEqual(backoffSchedule(c.b, none), c.want));
  }

  it("jitter adds up to delay * jitter on top of each delay, the capped ones included", () => {
    const b: WaitBackoff = { durationMs: 2000, factor: 2, jitter: 0.5, steps: 5, capMs: 5000 };
    const low = backoffSchedule(b, none);
    const high = backoffSchedule(b, most);
    assert.deepEqual(low, [2000, 4000, 5000, 5000]);
    for (const [i, d] of low.entries()) {
      assert.ok(high[i]! > d && high[i]! < d * 1.5, `delay ${i}: ${high[i]} within (${d}, ${d * 1.5})`);
    }
    assert.equal(
      backoffDelayMs(b, 1, () => 0.5),
      2500,
    );
    // a random source out of range is clamped rather than trusted
    assert.equal(
      backoffDelayMs(b, 1, () => 7),
      3000,
    );
  });

  it("no jitter when it is zero or negative (Go applies it only above zero)", () => {
    const b: WaitBackoff = { durationMs: 1000, factor: 2, jitter: 0, steps: 3, capMs: 0 };
    assert.deepEqual(backoffSchedule(b, most), [1000, 2000]);
  });

  it("refuses a failure count below 1", () => {
    assert.throws(() => backoffDelayMs(TEKTON_BACKOFF_DEFAULTS, 0), RangeError);
  });
});

describe("retrySchedule: a request's attempts under the runtime or the resolver's backoff", () => {
  const loaded = (raw: Record<string, string>): LoadedConfig => ({
    runtime: { ...defaultRuntimeConfig, maxAttempts: 5 },
    raw,
  });
  const tekton = { retryBackoff: parseWaitBackoff };

  it("without a backoff: max-attempts, and the queue's own delays", () => {
    assert.deepEqual(retrySchedule({}, loaded({ "backoff-steps": "3" }), 1), {
      attempts: 5,
      delayMs: undefined,
    });
    assert.deepEqual(retrySchedule(tekton, loaded({}), 1), { attempts: 5, delayMs: undefined });
  });

  it("with one: backoff-steps attempts, the n-th failure waits the n-th delay", () => {
    const raw = {
      "backoff-duration": "1s",
      "backoff-factor": "3",
      "backoff-jitter": "0",
      "backoff-steps": "4",
    };
    const delays = [1, 2, 3].map((n) => retrySchedule(tekton, loaded(raw), n, none));
    assert.deepEqual(delays, [
      { attempts: 4, delayMs: 1000 },
      { attempts: 4, delayMs: 3000 },
      { attempts: 4, delayMs: 9000 },
    ]);
  });

  it("a delay past what a timer takes waits the timer's longest", () => {
    const raw = { "backoff-duration": "1000h", "backoff-jitter": "0" };
    assert.equal(retrySchedule(tekton, loaded(raw), 1).delayMs, 2 ** 31 - 1);
  });
});
