// The demo end to end, as a person runs it (`node dev/demo/src/main.ts`, what
// ./scripts/demo.sh runs after its setup): its own control plane and real
// node, every service, every story. Not an e2e scenario: the demo starts a
// node of its own, and one node runs per machine at a time, so it cannot run
// while the e2e runner holds its node (scripts/test.sh runs it after the e2e
// scenarios, `pnpm test:demo` alone).
//
// Besides each story's outcome it checks what the demo must never print: the
// Pipe run's certificate and private key, as PEM or as the base64 a Secret
// holds them in.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { repoRoot } from "@quarry/devcluster/paths";

/** A cold first build of the node's binaries is minutes; with them cached the demo takes about a minute. */
const DEMO_TIMEOUT_MS = 20 * 60_000;
const NODE_LOCK = "/run/quarry/e2e-node.lock";

function runDemo(): Promise<{ code: number | null; output: string; pid: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(repoRoot, "dev", "demo", "src", "main.ts")], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const chunks: Buffer[] = [];
    // stdout (get, describe, resolve) and stderr (the narration) in the order they came
    child.stdout.on("data", (b: Buffer) => chunks.push(b));
    child.stderr.on("data", (b: Buffer) => chunks.push(b));
    const timer = setTimeout(() => child.kill("SIGTERM"), DEMO_TIMEOUT_MS);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output: Buffer.concat(chunks).toString("utf8"), pid: child.pid ?? -1 });
    });
  });
}

test("the demo: every story, the Pipe run's Secrets by name and never their content", {
  timeout: DEMO_TIMEOUT_MS + 60_000,
}, async () => {
  const { code, output, pid } = await runDemo();
  // the whole output, for when an assertion's tail is not enough
  const log = join(tmpdir(), `quarry-demo-test-${pid}.log`);
  writeFileSync(log, output);
  const tail = `${output.split("\n").slice(-80).join("\n")}\n(all of it: ${log})`;
  assert.equal(code, 0, `the demo exited ${code}; its output ends:\n${tail}`);

  for (const line of [
    /all eleven outcomes seen after/,
    // the http resolver's traffic to the web server, the hub resolver's to the hub protocol fixture
    /the web server answered 1 HTTP request: GET \/tasks\/lint\.yaml \(200\)\n/,
    /http-lint-stale +Succeeded=False ResolutionFailed \(DigestMismatch\): param "digest": the content of http:\/\/127\.0\.0\.1:\d+\/tasks\/lint\.yaml has sha256:[0-9a-f]{64}, not sha256:[0-9a-f]{64}/,
    /the hub fixture answered 2 HTTP requests: .+\/notify \(the package and its version list\), …\/notify\/0\.2\.1/,
    /refSource names 0\.2\.1: the highest release matching ">= 0\.2, < 1\.0"/,
    /all four runs ended as expected after/,
    /node 127\.0\.0\.1 ready: its start took \d+\.\ds/,
    // the pod on the node, as the watch saw it: created, openssl done, deleted
    /pod created on node 127\.0\.0\.1/,
    /openssl: exited 0 \(Completed\)/,
    /pod deleted/,
    /results: tls-crt=make-cert-self-signed-tls-crt, tls-key=make-cert-self-signed-tls-key/,
    /Secret demo-[0-9a-f]+\/make-cert-self-signed-tls-crt {2}type Opaque {2}keys tls\.crt \(\d+ bytes\)/,
    /Secret demo-[0-9a-f]+\/make-cert-self-signed-tls-key {2}type Opaque {2}keys tls\.key \(\d+ bytes\)/,
    /CN=api\.demo\.quarry\.test, valid .+, rsa 2048-bit key; the key is the certificate's/,
    /the pipe pod is gone/,
    /the Pipe run made its Secrets after/,
    /node stopped/,
    /torn down \(\d+\.\ds\); demo took \d+\.\ds/,
  ])
    assert.match(output, line, `the demo's output lacks ${line}; it ends:\n${tail}`);

  // progress: a step past a second says what it waits for, without a terminal a line at 1s and
  // every 10s after (so a handful in all, not a line per poll)
  assert.match(output, /waiting for timeout of nonesuch-task \(\d+s\)/, "no progress while (10) waits");
  const waiting = output.split("\n").filter((l) => /\] +waiting for .+ \(\d+s\)$/.test(l));
  assert.ok(waiting.length < 60, `${waiting.length} waiting lines: progress floods the log`);

  // the demo ends with its summary table: every step, what it asked, outcome, reason, duration
  const at = output.lastIndexOf("\nSummary:\n");
  assert.ok(at >= 0, `no summary table; the output ends:\n${tail}`);
  const table = output
    .slice(at + "\nSummary:\n".length)
    .trimEnd()
    .split("\n");
  assert.match(table[0]!, /^STEP +ASKED +OUTCOME +REASON +DURATION$/);
  const rows = table.slice(1);
  for (const row of rows) assert.match(row, / \d+\.\d+s$/, `a summary row without a duration: ${row}`);
  const outcomeOf = (step: string) =>
    rows.filter((r) => r.startsWith(`${step} `)).map((r) => r.split(/ {3,}/)[2]);
  for (const [step, outcomes] of [
    ["(1)", ["Succeeded"]],
    ["(2)", ["Failed"]],
    ["(3)", ["Succeeded"]],
    ["(4)", ["Failed"]],
    ["(5)", ["Succeeded"]],
    ["(6)", ["Failed"]],
    ["(7)", ["Succeeded"]],
    ["(8)", ["Succeeded"]],
    ["(9)", ["Succeeded"]],
    ["(11)", ["denied", "Failed"]],
    ["(10)", ["Failed"]],
    ["(12)", ["Succeeded"]],
    ["(13)", ["Failed"]],
    ["(14)", ["Succeeded"]],
    ["(15)", ["Failed"]],
    ["(16)", ["Succeeded"]],
    ["teardown", ["done"]],
  ] as const)
    assert.deepEqual(outcomeOf(step), outcomes, `summary row ${step}:\n${table.join("\n")}`);
  assert.match(table.join("\n"), /^\(6\) .+ ResolutionFailed \(DigestMismatch\) +\d/m);
  assert.match(table.join("\n"), /^\(13\) .+ CustomRunCancelled +\d/m);
  assert.match(table.join("\n"), /^\(15\) .+ ControllerNotFound +\d/m);
  const setup = outcomeOf("setup");
  assert.ok(setup.length >= 10 && setup.every((o) => o === "done"), `setup rows: ${setup.join(", ")}`);

  // the grep a reviewer would run: PEM armour, and "-----BEGIN" as base64 at each of its 3 alignments
  for (const leak of [
    /-----BEGIN/,
    /PRIVATE KEY/,
    /CERTIFICATE-----/,
    /LS0tLS1CRUdJT/,
    /tLS0tQkVHSU/,
    /tLS0tLUJFR0lO/,
  ])
    assert.doesNotMatch(output, leak, `the demo printed something matching ${leak}`);

  // nothing left holding the machine's node lock
  if (existsSync(NODE_LOCK))
    assert.notEqual(
      readFileSync(NODE_LOCK, "utf8").split(" ")[0],
      String(pid),
      "the demo left its node lock",
    );
});
