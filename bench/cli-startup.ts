// Benchmark: how fast the installed `quarry` starts. scripts/install-cli.sh
// builds the one-file bundle into a temporary PREFIX; then `quarry --help`,
// `quarry --version` and `quarry completion bash` run --runs times each on the
// machine's Node (/usr/bin/node, 20 here), interleaved with a bare
// `node -e 0` so the figure comes with the Node start-up it includes, on the
// same machine at the same moment. Wall time from spawn to exit.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "@quarry/devcluster/paths";
import { onePhase, runBenchmark } from "./lib/benchmark.ts";
import { log } from "./lib/run.ts";
import { median, round } from "./lib/stats.ts";
import { columns, valueReport } from "./lib/value-rows.ts";

const COMMANDS: Readonly<Record<string, readonly string[]>> = {
  "node -e 0": ["-e", "0"],
  "quarry --help": ["--help"],
  "quarry --version": ["--version"],
  "quarry completion bash": ["completion", "bash"],
};

function timedMs(node: string, args: readonly string[]): number {
  const start = process.hrtime.bigint();
  const r = spawnSync(node, args, { stdio: "ignore", env: { PATH: "/usr/bin:/bin" } });
  if (r.status !== 0) throw new Error(`${node} ${args.join(" ")} exited ${r.status}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

await runBenchmark({
  name: "cli-startup",
  about: "Start-up of the installed quarry bundle on the machine's Node: --help, --version, completion.",
  deadline: 300,
  flags: {
    runs: { type: "int", default: 30, min: 1, help: "runs of each command" },
    node: { type: "string", default: "/usr/bin/node", help: "the Node that runs the installed file" },
  },
  async setup(ctx) {
    const prefix = mkdtempSync(join(tmpdir(), "quarry-bench-cli-"));
    ctx.defer(() => rmSync(prefix, { recursive: true, force: true }));
    execFileSync("bash", [join(repoRoot, "scripts", "install-cli.sh")], {
      env: { ...process.env, PREFIX: prefix, QUARRY_BIN_DIR: "" },
      stdio: ["ignore", "ignore", "inherit"],
    });
    const bin = join(prefix, "bin", "quarry");
    const nodeVersion = execFileSync(ctx.flags.node, ["--version"], { encoding: "utf8" }).trim();
    return { bin, bytes: statSync(bin).size, nodeVersion };
  },
  phases: (ctx, s) =>
    onePhase("start-up", async () => {
      const times = new Map<string, number[]>(Object.keys(COMMANDS).map((c) => [c, []]));
      // one warm-up of each (page cache), then rounds that interleave the commands
      for (const [name, args] of Object.entries(COMMANDS))
        timedMs(ctx.flags.node, name.startsWith("node") ? args : [s.bin, ...args]);
      for (let i = 0; i < ctx.flags.runs && !ctx.signal.aborted; i++) {
        for (const [name, args] of Object.entries(COMMANDS)) {
          times.get(name)?.push(timedMs(ctx.flags.node, name.startsWith("node") ? args : [s.bin, ...args]));
        }
      }
      log(`${ctx.flags.runs} runs of each command`);
      return times;
    }),
  result(ctx, s, [times]) {
    const commands = Object.keys(COMMANDS).map((name) => {
      const all = [...(times?.get(name) ?? [])].sort((a, b) => a - b);
      return {
        command: name,
        runs: all.length,
        medianMs: round(median(all), 1),
        minMs: round(all[0] ?? 0, 1),
        maxMs: round(all[all.length - 1] ?? 0, 1),
      };
    });
    return {
      benchmark: "cli-startup",
      date: new Date().toISOString(),
      node: s.nodeVersion,
      bundleBytes: s.bytes,
      runs: ctx.flags.runs,
      commands,
    };
  },
  report(r) {
    const md = columns<(typeof r.commands)[number]>(
      [
        ["command", (c) => c.command],
        ["median ms", (c) => c.medianMs],
        ["min ms", (c) => c.minMs],
        ["max ms", (c) => c.maxMs],
      ],
      r.commands,
    );
    return valueReport(
      [["cli-startup", `Node ${r.node}, bundle ${r.bundleBytes} bytes, ${r.runs} runs each`]],
      md.header,
      md.rows,
    );
  },
  ok: (r, ctx) => r.commands.every((c) => c.runs === ctx.flags.runs),
});
