// The copy against real tar output: GNU tar and busybox tar (the e2e node's
// waiting image) run locally in place of the exec, on files of every kind the
// init container could leave. The refusal of a large file is checked at the
// byte level: the exec is aborted when the header arrives, before content.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { type ExecFn, type FileRead, TarPodFileReader } from "./copy.ts";
import { FirstEntryReader } from "./tar.ts";

const MiB = 1024 * 1024;
const target = { namespace: "ns", pod: "p", container: "quarry-wait" };

/** An ExecFn that runs the command here, `tar` as GNU tar or busybox's. */
function localExec(flavour: "gnu" | "busybox", seen?: { stdoutBytes: number }): ExecFn {
  return (_target, command, io) =>
    new Promise((resolve, reject) => {
      const [cmd, ...args] = flavour === "busybox" ? ["busybox", ...command] : command;
      const child = spawn(cmd!, args, { stdio: ["ignore", "pipe", "pipe"] });
      child.stdout.on("data", (c: Buffer) => {
        if (seen) seen.stdoutBytes += c.length;
        io.stdout(c);
      });
      child.stderr.on("data", (c: Buffer) => io.stderr(c));
      const onAbort = () => {
        child.kill("SIGKILL");
        reject(io.signal.reason);
      };
      io.signal.addEventListener("abort", onAbort, { once: true });
      child.on("error", reject);
      child.on("close", (code) => {
        io.signal.removeEventListener("abort", onAbort);
        resolve({ exitCode: code ?? undefined, message: code === null ? "killed" : "" });
      });
    });
}

function tree() {
  const dir = mkdtempSync(join(tmpdir(), "pipe-copy-"));
  const out = join(dir, "out");
  mkdirSync(join(out, "sub"), { recursive: true });
  writeFileSync(join(out, "tls.crt"), "-----BEGIN CERTIFICATE-----\nabc\n");
  writeFileSync(join(out, "empty"), "");
  writeFileSync(join(out, "exact"), Buffer.alloc(MiB, 7));
  writeFileSync(join(out, "big"), Buffer.alloc(MiB + 1, 7));
  writeFileSync(join(out, "sub", "x"), "x");
  symlinkSync("/etc/hostname", join(out, "link"));
  const long = join(out, "d".repeat(120));
  mkdirSync(long);
  writeFileSync(join(long, "name-past-100-chars.env"), "A=1\n");
  return { out, long };
}

test("TarPodFileReader: what each file becomes, with GNU tar and busybox tar", async () => {
  const { out, long } = tree();
  const cases: { name: string; path: string; want: (r: FileRead) => void }[] = [
    {
      name: "a file",
      path: join(out, "tls.crt"),
      want: (r) =>
        assert.deepEqual(r, { ok: true, bytes: Buffer.from("-----BEGIN CERTIFICATE-----\nabc\n") }),
    },
    {
      name: "an empty file",
      path: join(out, "empty"),
      want: (r) => assert.deepEqual(r, { ok: true, bytes: Buffer.alloc(0) }),
    },
    {
      name: "exactly 1 MiB fits",
      path: join(out, "exact"),
      want: (r) => assert.ok(r.ok && r.bytes.length === MiB && r.bytes.every((b) => b === 7)),
    },
    {
      name: "1 MiB + 1 is refused",
      path: join(out, "big"),
      want: (r) => assert.deepEqual(r, { ok: false, problem: "tooLarge", size: MiB + 1 }),
    },
    {
      name: "missing",
      path: join(out, "nope"),
      want: (r) => assert.deepEqual(r, { ok: false, problem: "missing" }),
    },
    {
      name: "a directory",
      path: join(out, "sub"),
      want: (r) => assert.deepEqual(r, { ok: false, problem: "notFile", type: "directory" }),
    },
    {
      name: "a symlink",
      path: join(out, "link"),
      want: (r) => assert.deepEqual(r, { ok: false, problem: "notFile", type: "symbolic link" }),
    },
    {
      name: "a path over 100 characters (GNU long name)",
      path: join(long, "name-past-100-chars.env"),
      want: (r) => assert.deepEqual(r, { ok: true, bytes: Buffer.from("A=1\n") }),
    },
  ];
  for (const flavour of ["gnu", "busybox"] as const) {
    const reader = new TarPodFileReader(localExec(flavour));
    for (const c of cases) {
      const got = await reader.read(target, c.path, { maxBytes: MiB, signal: AbortSignal.timeout(10_000) });
      try {
        c.want(got);
      } catch (err) {
        throw new Error(`${flavour}: ${c.name}: got ${JSON.stringify(got).slice(0, 200)}`, { cause: err });
      }
    }
  }
});

test("TarPodFileReader: a large file is refused at its header, before its content is read", async () => {
  const { out } = tree();
  // an exec that hands over the archive in 512-byte pieces and notices when it is stopped
  const archive = await new Promise<Buffer>((resolve) => {
    const chunks: Buffer[] = [];
    const child = spawn("tar", ["cf", "-", join(out, "big")], { stdio: ["ignore", "pipe", "ignore"] });
    child.stdout.on("data", (c: Buffer) => chunks.push(c));
    child.on("close", () => resolve(Buffer.concat(chunks)));
  });
  let handed = 0;
  const exec: ExecFn = async (_t, _cmd, io) => {
    for (let at = 0; at < archive.length; at += 512) {
      if (io.signal.aborted) throw io.signal.reason;
      io.stdout(archive.subarray(at, at + 512));
      handed += 512;
    }
    return { exitCode: 0, message: "" };
  };
  const got = await new TarPodFileReader(exec).read(target, join(out, "big"), {
    maxBytes: MiB,
    signal: AbortSignal.timeout(5000),
  });
  assert.deepEqual(got, { ok: false, problem: "tooLarge", size: MiB + 1 });
  assert.equal(handed, 512, "only the header was read");
});

test("TarPodFileReader: failures keep tar's words (bounded), never stdout", async () => {
  const cases: { name: string; exec: ExecFn; problem: string; detail?: RegExp }[] = [
    {
      name: "no tar in the image",
      exec: async () => ({ exitCode: undefined, message: 'exec: "tar": executable file not found in $PATH' }),
      problem: "failed",
      detail: /executable file not found/,
    },
    {
      name: "permission denied",
      exec: async (_t, _c, io) => {
        io.stderr(
          Buffer.from(
            "tar: Removing leading `/' from member names\ntar: /out/k: Cannot open: Permission denied\n",
          ),
        );
        io.stdout(Buffer.alloc(10240));
        return { exitCode: 2, message: "" };
      },
      problem: "failed",
      detail: /^tar exited with code 2: tar: \/out\/k: Cannot open: Permission denied/,
    },
    {
      name: "garbage on stdout",
      exec: async (_t, _c, io) => {
        io.stdout(Buffer.alloc(512, 0x41));
        return { exitCode: 0, message: "" };
      },
      problem: "failed",
      detail: /checksum/,
    },
    {
      name: "a file cut short",
      exec: async (_t, _c, io) => {
        const header = Buffer.alloc(512);
        header.write("out/x", 0);
        header.write("0000644\0", 100);
        header.write("00000000010\0", 124);
        header.write("0", 156);
        header.write("ustar  \0", 257);
        header.fill(0x20, 148, 156);
        let sum = 0;
        for (const b of header) sum += b;
        header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
        io.stdout(header);
        io.stdout(Buffer.from("abc"));
        return { exitCode: 1, message: "" };
      },
      problem: "failed",
      detail: /ended inside an entry/,
    },
  ];
  for (const c of cases) {
    const got = await new TarPodFileReader(c.exec).read(target, "/out/k", {
      maxBytes: MiB,
      signal: AbortSignal.timeout(5000),
    });
    assert.equal(got.ok, false, c.name);
    if (got.ok) continue;
    assert.equal(got.problem, c.problem, c.name);
    if (c.detail && got.problem === "failed") assert.match(got.detail, c.detail, c.name);
  }
});

test("TarPodFileReader: a connection failure is thrown (transient), an outside abort too", async () => {
  const broken: ExecFn = async () => {
    throw new Error("connection closed before the command's exit status");
  };
  await assert.rejects(
    new TarPodFileReader(broken).read(target, "/out/x", { maxBytes: MiB, signal: AbortSignal.timeout(5000) }),
    /exit status/,
  );
  const ac = new AbortController();
  const hangs: ExecFn = (_t, _c, io) =>
    new Promise((_resolve, reject) => io.signal.addEventListener("abort", () => reject(io.signal.reason)));
  const reading = new TarPodFileReader(hangs).read(target, "/out/x", { maxBytes: MiB, signal: ac.signal });
  ac.abort(new Error("step deadline"));
  await assert.rejects(reading, /step deadline/);
});

test("FirstEntryReader: byte by byte is the same as all at once; long names as GNU, pax and ustar write them", async () => {
  const { out, long } = tree();
  for (const [format, path] of [
    ["gnu", join(out, "tls.crt")],
    ["gnu", join(long, "name-past-100-chars.env")],
    ["pax", join(long, "name-past-100-chars.env")],
    ["ustar", join(long, "name-past-100-chars.env")],
  ] as const) {
    const archive = await new Promise<Buffer>((resolve) => {
      const chunks: Buffer[] = [];
      const child = spawn("tar", [`--format=${format}`, "-cf", "-", path], {
        stdio: ["ignore", "pipe", "ignore"],
      });
      child.stdout.on("data", (c: Buffer) => chunks.push(c));
      child.on("close", () => resolve(Buffer.concat(chunks)));
    });
    const whole = new FirstEntryReader(MiB).push(archive);
    const r = new FirstEntryReader(MiB);
    let bytewise: ReturnType<FirstEntryReader["push"]>;
    for (const b of archive) bytewise ??= r.push(Uint8Array.of(b));
    assert.deepEqual(bytewise, whole, format);
    assert.equal(whole?.kind, "file", format);
    if (whole?.kind === "file") {
      assert.equal(whole.name, path.slice(1), format);
      const want = path.endsWith(".env") ? "A=1\n" : "-----BEGIN CERTIFICATE-----\nabc\n";
      assert.equal(Buffer.from(whole.bytes).toString(), want, format);
    }
  }
});
