import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { SHELLS } from "./args.ts";
import { completionScript } from "./completion.ts";

test("bash: valid syntax, commands, resource words, flags and -o's formats", () => {
  const script = completionScript("bash");
  execFileSync("bash", ["-n"], { input: script });
  assert.match(script, /words="get describe resolve version doctor completion help"/);
  assert.match(script, /get\) words="requests runs customruns .*--output -o .*--watch -w/);
  assert.match(script, /-o\|--output\) COMPREPLY=\(\$\(compgen -W "wide json yaml name"/);
  assert.match(script, /^complete -F _quarry quarry$/m);
});

test("bash completes like a user would see it", () => {
  const complete = (line: string) =>
    execFileSync(
      "bash",
      [
        "-c",
        `${completionScript("bash")}\nCOMP_WORDS=(${line}); COMP_CWORD=$((\${#COMP_WORDS[@]}-1)); _quarry; echo "\${COMPREPLY[*]}"`,
      ],
      { encoding: "utf8" },
    ).trim();
  assert.equal(complete("quarry des"), "describe");
  assert.equal(complete("quarry describe task"), "taskrun");
  assert.equal(complete("quarry get -o y"), "yaml");
});

test("zsh and fish: every command and its flags", () => {
  for (const shell of SHELLS) assert.match(completionScript(shell), /doctor/);
  const zsh = completionScript("zsh");
  assert.match(zsh, /^#compdef quarry$/m);
  assert.match(
    zsh,
    /get\) _arguments .*'\(-o --output\)'\{-o,--output\}'\[output format\]:value:\(wide json yaml name\)'/,
  );
  const fish = completionScript("fish");
  assert.match(
    fish,
    /complete -c quarry -n '__fish_seen_subcommand_from get' -s o -l output -xa 'wide json yaml name'/,
  );
  assert.match(fish, /complete -c quarry -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'/);
});
