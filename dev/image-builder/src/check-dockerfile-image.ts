// Runs a service image's root filesystem with runc the way the charts' pods run it and fails
// when the image is not what they expect. scripts/build-dockerfile-images.sh calls it for every
// image it builds from images/Dockerfile.
// Usage: node dev/image-builder/src/check-dockerfile-image.ts <service> <rootfs> <image-config.json>
// The container gets the image's user, env, working directory and entrypoint, a read-only root,
// no capabilities, no new privileges, its own PID namespace and /tmp as a writable volume (the
// charts' emptyDir); it shares the host's network so /healthz can be probed from here. Its
// kubeconfig points at a local port nothing listens on: there is no API server.
// Needs root (runc).
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const NONROOT = 65532;
const RUNC_ROOT = "/run/quarry-runc";

interface ImageConfig {
  User?: string;
  Env?: string[];
  WorkingDir?: string;
  Entrypoint?: string[];
  Cmd?: string[] | null;
}

/** The part of runc's config.json this check changes. */
interface RuntimeSpec {
  process: {
    terminal: boolean;
    user: { uid: number; gid: number; additionalGids?: number[] };
    args: string[];
    env: string[];
    cwd: string;
    capabilities: Record<string, string[]>;
    noNewPrivileges: boolean;
  };
  root: { path: string; readonly: boolean };
  hostname?: string;
  mounts: { destination: string; type: string; source: string; options: string[] }[];
  linux: { namespaces: { type: string }[] };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const [service, rootfs, configPath] = process.argv.slice(2);
if (!service || !rootfs || !configPath) {
  console.error(
    "usage: node dev/image-builder/src/check-dockerfile-image.ts <service> <rootfs> <image-config.json>",
  );
  process.exit(2);
}
const image = JSON.parse(readFileSync(configPath, "utf8")) as ImageConfig;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === "object" && addr ? resolve(addr.port) : reject(new Error("no port"))));
    });
  });
}

function runc(...args: string[]): string {
  return execFileSync("runc", ["--root", RUNC_ROOT, ...args], { encoding: "utf8" });
}

/** A runc bundle for `args` (the image's entrypoint unless given), in a fresh directory. */
function bundle(volume: string, env: string[], args: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), `quarry-check-${service}-`));
  execFileSync("runc", ["spec", "--bundle", dir]);
  const spec = JSON.parse(readFileSync(join(dir, "config.json"), "utf8")) as RuntimeSpec;
  const [uid, gid] = (image.User ?? "").split(":").map(Number);
  spec.process = {
    ...spec.process,
    terminal: false,
    user: { uid: uid ?? -1, gid: gid ?? uid ?? -1 },
    args,
    env: [...(image.Env ?? []), ...env],
    cwd: image.WorkingDir || "/",
    // capabilities: {drop: [ALL]}, allowPrivilegeEscalation: false
    capabilities: { bounding: [], effective: [], inheritable: [], permitted: [], ambient: [] },
    noNewPrivileges: true,
  };
  spec.root = { path: rootfs as string, readonly: true };
  spec.hostname = service;
  spec.mounts.push({ destination: "/tmp", type: "bind", source: volume, options: ["rbind", "rw"] });
  spec.linux.namespaces = spec.linux.namespaces.filter((n) => n.type !== "network");
  writeFileSync(join(dir, "config.json"), JSON.stringify(spec, null, 2));
  return dir;
}

function start(id: string, dir: string): { child: ChildProcess; done: Promise<Run> } {
  const child = spawn("runc", ["--root", RUNC_ROOT, "run", "--bundle", dir, id], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d;
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d;
  });
  const done = new Promise<Run>((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
  return { child, done };
}

let seq = 0;
/** Runs `args` in the image to completion. */
async function exec(volume: string, args: string[], env: string[] = []): Promise<Run> {
  const id = `quarry-check-${service}-${process.pid}-${seq++}`;
  const dir = bundle(volume, env, args);
  try {
    return await start(id, dir).done;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function status(url: string): Promise<number> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await res.body?.cancel();
    return res.status;
  } catch {
    return 0;
  }
}

function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        throw new Error(`a log line on stdout is not JSON: ${l}`);
      }
    });
}

const volume = mkdtempSync(join(tmpdir(), `quarry-check-${service}-tmp-`));
chownSync(volume, NONROOT, NONROOT);
chmodSync(volume, 0o1777);
try {
  assert.equal(image.User, `${NONROOT}:${NONROOT}`, "the image's user");
  assert.deepEqual(image.Entrypoint, ["node", "src/main.js"], "the image's entrypoint");
  assert.equal(image.WorkingDir, "/app", "the image's working directory");
  // images/bundle.ts ran: the entry is the bundle, its source map beside it
  assert.ok(existsSync(join(rootfs!, "app/src/main.js.map")), "src/main.js is bundled (src/main.js.map)");

  const probe = await exec(volume, [
    "node",
    "-p",
    "JSON.stringify({ node: process.versions.node, uid: process.getuid(), gid: process.getgid(), pid: process.pid })",
  ]);
  assert.equal(probe.code, 0, `node in the image: ${probe.stderr}`);
  const facts = JSON.parse(probe.stdout) as { node: string; uid: number; gid: number; pid: number };
  assert.ok(Number(facts.node.split(".")[0]) >= 24, `node ${facts.node} is older than 24`);
  assert.equal(facts.uid, NONROOT, "uid");
  assert.equal(facts.gid, NONROOT, "gid");
  assert.equal(facts.pid, 1, "node is PID 1");

  // the root is read-only (EROFS, not just EACCES for a non-root user) and /tmp is writable
  const writes = await exec(volume, [
    "node",
    "-e",
    `const fs = require("node:fs");
     const codeOf = (f) => { try { f(); return "ok"; } catch (e) { return e.code; } };
     console.log(JSON.stringify({ app: codeOf(() => fs.writeFileSync("/app/probe", "")),
       tmp: codeOf(() => fs.writeFileSync("/tmp/probe", "")) }));`,
  ]);
  assert.equal(writes.code, 0, writes.stderr);
  assert.deepEqual(JSON.parse(writes.stdout), { app: "EROFS", tmp: "ok" }, "writes to / and /tmp");

  if (service === "git-resolver" || service === "all-in-one") {
    const git = await exec(volume, ["git", "--version"]);
    assert.equal(git.code, 0, `git in the git resolver's image: ${git.stderr}`);
    assert.match(git.stdout, /^git version /);
  }

  // the service itself, against an API server address that refuses connections
  const apiPort = await freePort();
  const opsPort = await freePort();
  writeFileSync(
    join(volume, "kubeconfig"),
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "none", cluster: { server: `https://127.0.0.1:${apiPort}` } }],
      users: [{ name: "none", user: { token: "none" } }],
      contexts: [{ name: "none", context: { cluster: "none", user: "none" } }],
      "current-context": "none",
    }),
  );
  chmodSync(join(volume, "kubeconfig"), 0o644);
  const id = `quarry-check-${service}-${process.pid}-main`;
  const dir = bundle(
    volume,
    ["KUBECONFIG=/tmp/kubeconfig", `QUARRY_OPS_PORT=${opsPort}`],
    [...(image.Entrypoint ?? []), ...(image.Cmd ?? [])],
  );
  const started = Date.now();
  const { done } = start(id, dir);
  let exited: Run | undefined;
  void done.then((r) => {
    exited = r;
  });
  try {
    let healthz = 0;
    while (!exited && Date.now() - started < 30_000 && healthz !== 200) {
      await new Promise((r) => setTimeout(r, 250));
      healthz = await status(`http://127.0.0.1:${opsPort}/healthz`);
    }
    if (exited) {
      // Some services ask the API server before they serve (the cluster resolver's discovery):
      // they may end, but only because nothing answered at the kubeconfig's address.
      const { code, stdout, stderr } = exited;
      assert.notEqual(code, 0, "the service exited 0 with no API server");
      assert.match(stderr, new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${apiPort}`), `why it ended: ${stderr}`);
      jsonLines(stdout);
      console.log(
        JSON.stringify({
          service,
          node: facts.node,
          uid: facts.uid,
          startup: "ended: its API server refused the connection",
          exitCode: code,
          ms: Date.now() - started,
        }),
      );
    } else {
      assert.equal(healthz, 200, "/healthz within 30 s");
      const ready = Date.now() - started;
      // PID 1 of the container, seen from here: the entrypoint's node as 65532
      const { pid } = JSON.parse(runc("state", id)) as { pid: number };
      const uidLine = readFileSync(`/proc/${pid}/status`, "utf8").match(/^Uid:\s+(\d+)/m)?.[1];
      assert.equal(Number(uidLine), NONROOT, "the service's uid");
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
      assert.deepEqual(cmdline, ["node", "src/main.js"], "PID 1 is the entrypoint's node");
      const termAt = Date.now();
      runc("kill", id, "TERM");
      const deadline = new Promise<undefined>((r) => setTimeout(() => r(undefined), 30_000).unref());
      const end = await Promise.race([done, deadline]);
      assert.ok(end, "still running 30 s after SIGTERM");
      assert.equal(end.code, 0, `exit code after SIGTERM; stderr: ${end.stderr}`);
      const lines = jsonLines(end.stdout);
      assert.ok(
        // the all-in-one process logs as "quarry", the name of its one runtime
        lines.some(
          (l) =>
            l.service === (service === "all-in-one" ? "quarry" : service) && l.msg === "shutdown complete",
        ),
        "a JSON 'shutdown complete' line from the service",
      );
      console.log(
        JSON.stringify({
          service,
          node: facts.node,
          uid: facts.uid,
          startup: "serving /healthz",
          healthzMs: ready,
          sigtermExitCode: end.code,
          sigtermMs: Date.now() - termAt,
          logLines: lines.length,
        }),
      );
    }
  } finally {
    try {
      runc("delete", "--force", id);
    } catch {
      // already gone
    }
    rmSync(dir, { recursive: true, force: true });
  }
} finally {
  rmSync(volume, { recursive: true, force: true });
}
