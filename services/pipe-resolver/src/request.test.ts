import assert from "node:assert/strict";
import { test } from "node:test";
import type { Param } from "@quarry/api";
import { mergeParams, readRequest } from "./request.ts";

const p = (name: string, value: Param["value"]): Param => ({ name, value });

test("readRequest: a Pipe by name, or a strategy with its own files; the rest are strategy params", () => {
  assert.deepEqual(readRequest([p("pipe", " gencert "), p("cn", "example.com")]), {
    ok: true,
    source: { pipe: "gencert" },
    params: [p("cn", "example.com")],
  });
  const entries = [
    { file: "/out/tls.key", kind: "Secret", key: "tls-key" },
    { envFile: "/out/build.env", kind: "ConfigMap", key: "env" },
  ];
  const inline = {
    ok: true,
    source: {
      inline: {
        name: "gencert",
        strategy: { kind: "ClusterPipeStrategy", name: "gencert" },
        params: [],
        fixed: new Map(),
        entries,
      },
    },
    params: [p("days", "30"), p("flags", ["-a"])],
  };
  const yaml =
    "- file: /out/tls.key\n  kind: Secret\n  key: tls-key\n- envFile: /out/build.env\n  kind: ConfigMap\n  key: env\n";
  for (const files of [yaml, JSON.stringify(entries)]) {
    assert.deepEqual(
      readRequest([
        p("strategy", "gencert"),
        p("days", "30"),
        p("strategyKind", "ClusterPipeStrategy"),
        p("files", files),
        p("flags", ["-a"]),
      ]),
      inline,
    );
  }
});

test("readRequest: malformed requests fail InvalidParams (InvalidPipe for bad files), naming the param", () => {
  const inline = [
    p("strategy", "s"),
    p("strategyKind", "PipeStrategy"),
    p("files", "[{file: /o/a, kind: Secret, key: k}]"),
  ];
  const cases: [string, Param[] | undefined, string, string][] = [
    [
      "nothing",
      undefined,
      "InvalidParams",
      'a pipe request needs param "pipe" (the name of a Pipe), or params "strategy", "strategyKind" and "files"',
    ],
    [
      "only strategy params",
      [p("cn", "x")],
      "InvalidParams",
      'a pipe request needs param "pipe" (the name of a Pipe), or params "strategy", "strategyKind" and "files"',
    ],
    [
      "pipe and files",
      [p("pipe", "gencert"), p("files", "[]"), p("strategy", "s")],
      "InvalidParams",
      'param "pipe" names a Pipe, which brings its own strategy and files; do not also give "strategy", "files"',
    ],
    ["pipe not a string", [p("pipe", ["a"])], "InvalidParams", 'param "pipe" must be a non-empty string'],
    ["pipe blank", [p("pipe", "  ")], "InvalidParams", 'param "pipe" must be a non-empty string'],
    [
      "pipe traversal",
      [p("pipe", "../good")],
      "InvalidParams",
      'param "pipe": "../good" is not a valid object name',
    ],
    [
      "strategy with a slash",
      [p("strategy", "a/b"), p("strategyKind", "PipeStrategy"), p("files", "[]")],
      "InvalidParams",
      'param "strategy": "a/b" is not a valid object name',
    ],
    [
      "no strategyKind",
      [p("strategy", "s"), p("files", "[]")],
      "InvalidParams",
      'a pipe request without a Pipe needs params "strategy", "strategyKind" and "files"; "strategyKind" is missing',
    ],
    [
      "only files",
      [p("files", "[]")],
      "InvalidParams",
      'a pipe request without a Pipe needs params "strategy", "strategyKind" and "files"; "strategy", "strategyKind" are missing',
    ],
    [
      "bad strategyKind",
      [p("strategy", "s"), p("strategyKind", "Task"), p("files", "[]")],
      "InvalidParams",
      'param "strategyKind" is "Task"; use PipeStrategy or ClusterPipeStrategy',
    ],
    [
      "files not a string",
      [p("strategy", "s"), p("strategyKind", "PipeStrategy"), p("files", ["/o/a"])],
      "InvalidParams",
      'param "files" must be a string: a YAML or JSON list of {file | envFile, kind, key}',
    ],
    [
      "files not YAML",
      [p("strategy", "s"), p("strategyKind", "PipeStrategy"), p("files", "[{file: ")],
      "InvalidParams",
      'param "files" is not YAML: unexpected end of the stream within a flow collection (2:1)',
    ],
    [
      "files not a list",
      [p("strategy", "s"), p("strategyKind", "PipeStrategy"), p("files", "file: /o/a")],
      "InvalidPipe",
      'param "files" must be a list of files to pipe, not an object',
    ],
    [
      "files with a bad key",
      [
        p("strategy", "s"),
        p("strategyKind", "PipeStrategy"),
        p("files", "[{file: /o/a, kind: Secret, key: a.b}]"),
      ],
      "InvalidPipe",
      'param "files"[0].key "a.b" must match ^[a-zA-Z0-9_-]+$ and have at most 63 characters',
    ],
    [
      "a strategy param of a wrong shape",
      [...inline, { name: "cn", value: 3 } as unknown as Param],
      "InvalidParamType",
      'params[0] ("cn") must be a string, an array of strings or an object of strings',
    ],
  ];
  for (const [name, params, reason, message] of cases)
    assert.deepEqual(readRequest(params), { ok: false, reason, message }, name);
});

test("mergeParams: the request's values over the Pipe's, by name", () => {
  const cases: [Param[], Param[], Param[]][] = [
    [[], [], []],
    [[p("a", "1")], [], [p("a", "1")]],
    [[], [p("a", "1")], [p("a", "1")]],
    [
      [p("a", "1"), p("b", "2")],
      [p("c", "3"), p("a", "x")],
      [p("a", "x"), p("b", "2"), p("c", "3")],
    ],
    [[p("o", { k: "v" })], [p("o", { k2: "v2" })], [p("o", { k2: "v2" })]],
  ];
  for (const [pipe, request, want] of cases) assert.deepEqual(mergeParams(pipe, request), want);
});
