import assert from "node:assert/strict";
import { test } from "node:test";
import { parseEnvFile } from "./envfile.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

test("parseEnvFile: KEY=VALUE lines, comments and blank lines skipped, values verbatim", () => {
  const cases: { name: string; input: string | Uint8Array; want: [string, string][] }[] = [
    { name: "empty file", input: "", want: [] },
    { name: "one line, no newline", input: "A=1", want: [["A", "1"]] },
    {
      name: "several lines",
      input: "A=1\nB=two words\nC=\n",
      want: [
        ["A", "1"],
        ["B", "two words"],
        ["C", ""],
      ],
    },
    {
      name: "CRLF",
      input: "A=1\r\nB=2\r\n",
      want: [
        ["A", "1"],
        ["B", "2"],
      ],
    },
    {
      name: "comments and blanks",
      input: "# generated\n\n   \n  # indented comment\nA=1\n",
      want: [["A", "1"]],
    },
    {
      name: "leading whitespace ignored",
      input: "   A=1\n\tB=2",
      want: [
        ["A", "1"],
        ["B", "2"],
      ],
    },
    {
      name: "value keeps '=', quotes and trailing spaces",
      input: 'A=x=y\nB="q"  \n',
      want: [
        ["A", "x=y"],
        ["B", '"q"  '],
      ],
    },
    { name: "value keeps '#'", input: "A=1 # not a comment", want: [["A", "1 # not a comment"]] },
    {
      name: "data-key characters",
      input: "a.b-c_D=1\n.x=2",
      want: [
        ["a.b-c_D", "1"],
        [".x", "2"],
      ],
    },
    { name: "UTF-8 BOM skipped", input: "\uFEFFA=1", want: [["A", "1"]] },
    { name: "UTF-8 values", input: "GREETING=grüß dich", want: [["GREETING", "grüß dich"]] },
  ];
  for (const c of cases) {
    const result = parseEnvFile(typeof c.input === "string" ? bytes(c.input) : c.input);
    assert.deepEqual(result, { ok: true, entries: new Map(c.want) }, c.name);
  }
});

test("parseEnvFile: a malformed line fails with its number and the rule, never its text", () => {
  const secret = "hunter2-s3cr3t";
  const cases: { name: string; input: string | Uint8Array; line: number; message: string }[] = [
    {
      name: "no '='",
      input: `A=1\n${secret}\n`,
      line: 2,
      message: 'line 2 is not KEY=VALUE (it has no "=")',
    },
    {
      name: "empty key",
      input: `=${secret}`,
      line: 1,
      message: 'line 1: the key (before the first "=") is empty',
    },
    {
      name: "space in key",
      input: `# c\n\n${secret} x=1`,
      line: 3,
      message: 'line 3: the key (before the first "=") must match ^[-._a-zA-Z0-9]+$',
    },
    {
      name: "space before '='",
      input: `A =${secret}`,
      line: 1,
      message: 'line 1: the key (before the first "=") must match ^[-._a-zA-Z0-9]+$',
    },
    {
      name: "key '..'",
      input: `..=${secret}`,
      line: 1,
      message: `line 1: the key (before the first "=") must not be '..'`,
    },
    {
      name: "key too long",
      input: `${"K".repeat(254)}=${secret}`,
      line: 1,
      message: 'line 1: the key (before the first "=") is longer than 253 characters',
    },
    {
      name: "duplicate key",
      input: `A=1\nB=2\nA=${secret}`,
      line: 3,
      message: "line 3 sets the same key as line 1",
    },
    {
      name: "invalid UTF-8",
      input: new Uint8Array([...bytes("A=1\nB="), 0xff, 0xfe, ...bytes("\n")]),
      line: 2,
      message: "line 2 is not valid UTF-8",
    },
  ];
  for (const c of cases) {
    const result = parseEnvFile(typeof c.input === "string" ? bytes(c.input) : c.input);
    assert.deepEqual(result, { ok: false, line: c.line, message: c.message }, c.name);
    assert.ok(!JSON.stringify(result).includes(secret), `${c.name}: the line's text is not in the error`);
  }
});
