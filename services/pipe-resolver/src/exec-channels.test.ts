import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  Channel,
  ChannelDemux,
  EXEC_PROTOCOLS,
  execOutcome,
  execPath,
  handshakeFailure,
  webSocketUrl,
} from "./exec-channels.ts";

const target = { namespace: "team-a", pod: "pipe-x1", container: "wait" };
const frame = (channel: number, data: string | Uint8Array = "") =>
  Uint8Array.from([channel, ...(typeof data === "string" ? Buffer.from(data) : data)]);
const text = (chunks: Uint8Array[]) => Buffer.concat(chunks).toString("utf8");

function demux() {
  const out: Uint8Array[] = [];
  const err: Uint8Array[] = [];
  const d = new ChannelDemux(
    (c) => out.push(Uint8Array.from(c)),
    (c) => err.push(Uint8Array.from(c)),
  );
  return { d, out, err };
}

const nonZero = (code: string) => ({
  status: "Failure",
  reason: "NonZeroExitCode",
  message: `command terminated with non-zero exit code: error executing command [tar cf - /x], exit code ${code}`,
  details: { causes: [{ reason: "ExitCode", message: code }] },
});

describe("exec channel protocol", () => {
  it("offers v5, then v4", () => {
    assert.deepEqual([...EXEC_PROTOCOLS], ["v5.channel.k8s.io", "v4.channel.k8s.io"]);
  });

  it("asks for stdout and stderr, no stdin or tty, one command parameter per argument", () => {
    const path = execPath(target, ["tar", "cf", "-", "/tmp/a b&c"]);
    const url = new URL(`https://x${path}`);
    assert.equal(url.pathname, "/api/v1/namespaces/team-a/pods/pipe-x1/exec");
    assert.deepEqual(url.searchParams.getAll("command"), ["tar", "cf", "-", "/tmp/a b&c"]);
    assert.equal(url.searchParams.get("container"), "wait");
    assert.equal(url.searchParams.get("stdout"), "true");
    assert.equal(url.searchParams.get("stderr"), "true");
    assert.equal(url.searchParams.get("stdin"), "false");
    assert.equal(url.searchParams.get("tty"), "false");
  });

  it("turns the server's URL into a WebSocket URL, keeping a path prefix", () => {
    assert.equal(webSocketUrl("https://10.0.0.1:6443", "/api/v1/x?a=1"), "wss://10.0.0.1:6443/api/v1/x?a=1");
    assert.equal(webSocketUrl("http://127.0.0.1:8080/", "/api"), "ws://127.0.0.1:8080/api");
    assert.equal(
      webSocketUrl("https://rancher/k8s/clusters/c-1", "/api"),
      "wss://rancher/k8s/clusters/c-1/api",
    );
  });
});

describe("execOutcome", () => {
  it("reads Success as exit 0", () => {
    assert.deepEqual(execOutcome({ status: "Success" }), { exitCode: 0, message: "" });
  });

  it("reads NonZeroExitCode's ExitCode cause", () => {
    const out = execOutcome(nonZero("2"));
    assert.equal(out.exitCode, 2);
    assert.match(out.message, /exit code 2/);
  });

  it("leaves the exit code unknown for any other failure, with its message", () => {
    assert.deepEqual(
      execOutcome({ status: "Failure", reason: "InternalError", message: "no such container" }),
      {
        exitCode: undefined,
        message: "no such container",
      },
    );
    assert.equal(execOutcome({ status: "Failure", reason: "NonZeroExitCode" }).exitCode, undefined);
    assert.equal(execOutcome(nonZero("x")).exitCode, undefined);
    assert.equal(execOutcome({}).message, "exec failed");
    assert.equal(execOutcome({ message: "m".repeat(1000) }).message.length, 300);
  });
});

describe("ChannelDemux", () => {
  it("passes stdout and stderr through as they come, bytes untouched", () => {
    const { d, out, err } = demux();
    const binary = Uint8Array.from([0, 255, 3, 1, 10]);
    assert.equal(d.push(frame(Channel.stdout, binary)), undefined);
    assert.equal(d.push(frame(Channel.stderr, "tar: Removing leading `/'\n")), undefined);
    assert.equal(d.push(frame(Channel.stdout, "more")), undefined);
    assert.deepEqual(Buffer.concat(out), Buffer.concat([binary, Buffer.from("more")]));
    assert.equal(text(err), "tar: Removing leading `/'\n");
  });

  it("ignores each channel's opening empty message, v5 close messages and unknown channels", () => {
    const { d, out, err } = demux();
    for (const m of [
      frame(Channel.stdout),
      frame(Channel.stderr),
      frame(Channel.error),
      frame(Channel.close, Uint8Array.from([Channel.stdout])),
      frame(Channel.resize, "{}"),
      frame(9, "x"),
      new Uint8Array(0),
    ])
      assert.equal(d.push(m), undefined);
    assert.equal(out.length + err.length, 0);
    assert.equal(d.end(), undefined);
  });

  it("returns the exit once the error channel holds a whole Status", () => {
    const { d } = demux();
    assert.deepEqual(d.push(frame(Channel.error, JSON.stringify({ status: "Success" }))), {
      exitCode: 0,
      message: "",
    });
  });

  it("gathers a Status sent in pieces, split inside a UTF-8 character too", () => {
    const { d } = demux();
    const json = Buffer.from(JSON.stringify({ ...nonZero("1"), message: "échec" }));
    const cut = json.indexOf(Buffer.from("é")) + 1; // between the two bytes of é
    assert.equal(d.push(frame(Channel.error, json.subarray(0, cut))), undefined);
    const exit = d.push(frame(Channel.error, json.subarray(cut)));
    assert.deepEqual(exit, { exitCode: 1, message: "échec" });
  });

  it("keeps an error channel that never became a Status as the message, with no exit code", () => {
    const { d } = demux();
    assert.equal(d.push(frame(Channel.error, 'container not found ("wait")')), undefined);
    assert.deepEqual(d.end(), { exitCode: undefined, message: 'container not found ("wait")' });
  });
});

describe("handshakeFailure", () => {
  it("names a refusal's HTTP status as before (the ws package's words)", () => {
    assert.equal(handshakeFailure({ kind: "refused", status: 403 }), "Unexpected server response: 403");
    assert.equal(handshakeFailure({ kind: "refused", status: 404 }), "Unexpected server response: 404");
  });

  it("passes a network error's message through", () => {
    const error = new Error("connect ECONNREFUSED 127.0.0.1:6443");
    assert.equal(handshakeFailure({ kind: "failed", error }), "connect ECONNREFUSED 127.0.0.1:6443");
  });

  it("says when no offered protocol was chosen", () => {
    assert.match(
      handshakeFailure({ kind: "upgraded", protocol: undefined }),
      /accepted none of the exec protocols/,
    );
    assert.match(
      handshakeFailure({ kind: "upgraded", protocol: "channel.k8s.io" }),
      /chose exec protocol channel\.k8s\.io/,
    );
    assert.match(handshakeFailure({ kind: "pending" }), /closed during the WebSocket handshake/);
  });
});
