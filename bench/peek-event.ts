// Benchmark: what a replica pays for a watch event of a request outside its
// buckets (peekWatchEvent on the raw line) against what it paid before (JSON.parse
// of the line), on ResolutionRequest events shaped as the apiserver sends them:
// sorted keys, managedFields of three managers, and, once resolved, a Task's
// YAML in status.data. In-process, no cluster.
import { peekWatchEvent } from "@quarry/kube";
import { onePhase, runBenchmark } from "./lib/benchmark.ts";
import { log } from "./lib/run.ts";
import { median, round } from "./lib/stats.ts";
import { columns, valueReport } from "./lib/value-rows.ts";

const TASK = `apiVersion: tekton.dev/v1
kind: Task
metadata:
  name: build
spec:
  params:
${Array.from({ length: 20 }, (_, i) => `    - name: p${i}\n      type: string\n      default: "value ${i}"`).join("\n")}
  steps:
${Array.from({ length: 6 }, (_, i) => `    - name: s${i}\n      image: registry.example/tool:${i}\n      script: |\n        echo step ${i} && make target-${i}`).join("\n")}
`;

function requestEvent(i: number, resolved: boolean): string {
  const managed = (manager: string, subresource?: string) => ({
    apiVersion: "resolution.tekton.dev/v1beta1",
    fieldsType: "FieldsV1",
    fieldsV1: { "f:metadata": { "f:labels": { ".": {}, "f:resolution.tekton.dev/type": {} } }, "f:spec": {} },
    manager,
    operation: "Update",
    ...(subresource && { subresource }),
    time: "2026-11-28T12:00:00Z",
  });
  const object = {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: {
      creationTimestamp: "2026-11-28T12:00:00Z",
      generation: 1,
      labels: { "resolution.tekton.dev/type": "git" },
      managedFields: [
        managed("controller"),
        managed("lifecycle-controller", "status"),
        managed("git-resolver", "status"),
      ],
      name: `git-${i.toString(16).padStart(32, "0")}`,
      namespace: "team-a",
      ownerReferences: [{ apiVersion: "tekton.dev/v1", kind: "TaskRun", name: `run-${i}`, uid: "u-1" }],
      resourceVersion: String(100_000 + i),
      uid: `0000-${i}`,
    },
    spec: {
      params: [
        { name: "url", value: "https://git.example/org/repo.git" },
        { name: "revision", value: "main" },
        { name: "pathInRepo", value: `tasks/task-${i}.yaml` },
      ],
    },
    status: {
      annotations: { "quarry.dev/accepted-by": "git-resolver-7f9c-1" },
      conditions: [
        {
          lastTransitionTime: "2026-11-28T12:00:01Z",
          reason: resolved ? "Succeeded" : "ResolutionInProgress",
          status: resolved ? "True" : "Unknown",
          type: "Succeeded",
        },
      ],
      ...(resolved && {
        data: Buffer.from(TASK).toString("base64"),
        refSource: {
          uri: "git+https://git.example/org/repo.git",
          digest: { sha1: "a".repeat(40) },
          entryPoint: `tasks/task-${i}.yaml`,
        },
      }),
    },
  };
  return JSON.stringify({ type: resolved ? "MODIFIED" : "ADDED", object });
}

function nsPerEvent(lines: readonly string[], rounds: number, each: (line: string) => unknown): number[] {
  const out: number[] = [];
  let sink = 0;
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint();
    for (const line of lines) if (each(line)) sink++;
    out.push(Number(process.hrtime.bigint() - start) / lines.length);
  }
  if (sink < 0) log("unreachable");
  return out;
}

await runBenchmark({
  name: "peek-event",
  about: "A watch event outside this replica's buckets: peekWatchEvent on the raw line against JSON.parse.",
  deadline: 120,
  flags: {
    events: { type: "int", default: 20_000, min: 100, help: "events per round, half new and half resolved" },
    rounds: { type: "int", default: 15, min: 3, help: "rounds of each, interleaved" },
  },
  async setup(ctx) {
    const lines = Array.from({ length: ctx.flags.events }, (_, i) => requestEvent(i, i % 2 === 1));
    return { lines, bytes: Math.round(lines.reduce((n, l) => n + l.length, 0) / lines.length) };
  },
  phases: (ctx, s) =>
    onePhase("scan", async () => {
      // warm both paths into optimised code before measuring
      nsPerEvent(s.lines, 2, (l) => peekWatchEvent(l));
      nsPerEvent(s.lines, 2, (l) => JSON.parse(l));
      const peek: number[] = [];
      const parse: number[] = [];
      for (let r = 0; r < ctx.flags.rounds && !ctx.signal.aborted; r++) {
        peek.push(...nsPerEvent(s.lines, 1, (l) => peekWatchEvent(l)));
        parse.push(...nsPerEvent(s.lines, 1, (l) => JSON.parse(l)));
      }
      return { peek, parse };
    }),
  result(ctx, s, [m]) {
    const peek = round(median(m?.peek ?? []) / 1000, 2);
    const parse = round(median(m?.parse ?? []) / 1000, 2);
    return {
      benchmark: "peek-event",
      date: new Date().toISOString(),
      node: process.version,
      events: ctx.flags.events,
      rounds: ctx.flags.rounds,
      meanEventBytes: s.bytes,
      peekMicros: peek,
      parseMicros: parse,
      ratio: round(peek / parse, 3),
    };
  },
  report(r) {
    const md = columns<typeof r>(
      [
        ["event bytes (mean)", (x) => x.meanEventBytes],
        ["peek µs/event (median)", (x) => x.peekMicros],
        ["JSON.parse µs/event (median)", (x) => x.parseMicros],
        ["peek ÷ parse", (x) => x.ratio],
      ],
      [r],
    );
    return valueReport(
      [["peek-event", `Node ${r.node}, ${r.events} events × ${r.rounds} rounds`]],
      md.header,
      md.rows,
    );
  },
  ok: (r) => r.peekMicros > 0 && r.parseMicros > 0,
});
