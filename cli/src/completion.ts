// `quarry completion bash|zsh|fish`: shell completion scripts, generated from
// the same table of commands and flags the parser uses, so they cannot drift.
// Install as kubectl's: `source <(quarry completion bash)`, or write the
// output to the shell's completion directory.
import {
  DESCRIBE_RESOURCES,
  GET_RESOURCES,
  OUTPUT_FORMATS,
  SHELLS,
  type Shell,
  VERB_FLAGS,
  type Verb,
} from "./args.ts";

const COMMANDS: Readonly<Record<Verb, string>> = {
  get: "list ResolutionRequests or runs",
  describe: "show a request or a run and what is behind it",
  resolve: "ask a resolver for something",
  version: "client and fleet versions",
  doctor: "check the installation",
  completion: "print a shell completion script",
  help: "usage",
};

interface FlagSpec {
  short?: string;
  help: string;
  /** What the flag's value completes to: fixed words, a file, or anything (none offered). */
  value?: readonly string[] | "file" | "any";
}

const FLAGS: Readonly<Record<string, FlagSpec>> = {
  namespace: { short: "n", help: "namespace", value: "any" },
  "all-namespaces": { short: "A", help: "every namespace" },
  kubeconfig: { help: "kubeconfig file", value: "file" },
  context: { help: "kubeconfig context", value: "any" },
  output: { short: "o", help: "output format", value: OUTPUT_FORMATS },
  selector: { short: "l", help: "label selector", value: "any" },
  watch: { short: "w", help: "watch for changes" },
  timeout: { help: "how long to wait, e.g. 90s, 1m", value: "any" },
  kind: { help: "run flavour", value: ["Run", "CustomRun"] },
  client: { help: "client version only" },
  "system-namespace": { help: "the fleet's namespace", value: "any" },
};

/** Words offered after a command (resource types, shells). */
const ARGUMENTS: Partial<Record<Verb, readonly string[]>> = {
  get: GET_RESOURCES,
  describe: DESCRIBE_RESOURCES,
  completion: SHELLS,
};

const verbs = Object.keys(COMMANDS) as Verb[];

export function completionScript(shell: Shell): string {
  switch (shell) {
    case "bash":
      return bashScript();
    case "zsh":
      return zshScript();
    case "fish":
      return fishScript();
  }
}

function flagWords(verb: Verb): string[] {
  return VERB_FLAGS[verb].flatMap((f) => {
    const spec = FLAGS[f];
    return spec?.short ? [`--${f}`, `-${spec.short}`] : [`--${f}`];
  });
}

function bashScript(): string {
  const valueCases = Object.entries(FLAGS)
    .filter(([, s]) => s.value !== undefined)
    .map(([name, s]) => {
      const pattern = s.short ? `-${s.short}|--${name}` : `--${name}`;
      const reply =
        s.value === "file"
          ? `COMPREPLY=($(compgen -f -- "$cur"))`
          : s.value === "any"
            ? "COMPREPLY=()"
            : `COMPREPLY=($(compgen -W "${(s.value as readonly string[]).join(" ")}" -- "$cur"))`;
      return `    ${pattern}) ${reply}; return ;;`;
    });
  const verbCases = verbs.map(
    (v) => `    ${v}) words="${[...(ARGUMENTS[v] ?? []), ...flagWords(v)].join(" ")}" ;;`,
  );
  return `# bash completion for quarry: source <(quarry completion bash)
_quarry() {
  local cur prev cmd words w i
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  case "$prev" in
${valueCases.join("\n")}
  esac
  cmd=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case "$w" in -*) ;; *) cmd="$w"; break ;; esac
  done
  case "$cmd" in
    "") words="${verbs.join(" ")}" ;;
${verbCases.join("\n")}
    *) words="" ;;
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F _quarry quarry
`;
}

function zshScript(): string {
  const commands = verbs.map((v) => `    '${v}:${COMMANDS[v]}'`);
  const verbCases = verbs.map((v) => {
    const specs = VERB_FLAGS[v].map((f) => zshFlag(f, FLAGS[f]!));
    const args = ARGUMENTS[v];
    if (args) specs.push(`'*:argument:(${args.join(" ")})'`);
    return `    ${v}) _arguments ${specs.join(" ")} ;;`;
  });
  return `#compdef quarry
# zsh completion for quarry: source <(quarry completion zsh), or save as _quarry on $fpath
_quarry() {
  local -a commands
  commands=(
${commands.join("\n")}
  )
  if (( CURRENT == 2 )); then
    _describe 'command' commands
    return
  fi
  local cmd=$words[2]
  shift words
  (( CURRENT-- ))
  case $cmd in
${verbCases.join("\n")}
  esac
}
if [ "$funcstack[1]" = "_quarry" ]; then _quarry "$@"; else compdef _quarry quarry; fi
`;
}

function zshFlag(name: string, spec: FlagSpec): string {
  const value =
    spec.value === undefined
      ? ""
      : spec.value === "file"
        ? ":file:_files"
        : spec.value === "any"
          ? ":value: "
          : `:value:(${spec.value.join(" ")})`;
  const names = spec.short ? `{-${spec.short},--${name}}` : `--${name}`;
  const exclusive = spec.short ? `'(-${spec.short} --${name})'` : "";
  return `${exclusive}${names}'[${spec.help}]${value}'`;
}

function fishScript(): string {
  const lines = ["# fish completion for quarry: quarry completion fish | source", "complete -c quarry -f"];
  for (const v of verbs)
    lines.push(`complete -c quarry -n __fish_use_subcommand -a ${v} -d '${COMMANDS[v]}'`);
  for (const v of verbs) {
    const when = `-n '__fish_seen_subcommand_from ${v}'`;
    const args = ARGUMENTS[v];
    if (args) lines.push(`complete -c quarry ${when} -a '${args.join(" ")}'`);
    for (const f of VERB_FLAGS[v]) {
      const spec = FLAGS[f]!;
      const short = spec.short ? ` -s ${spec.short}` : "";
      const value =
        spec.value === undefined
          ? ""
          : spec.value === "file"
            ? " -rF"
            : spec.value === "any"
              ? " -x"
              : ` -xa '${spec.value.join(" ")}'`;
      lines.push(`complete -c quarry ${when}${short} -l ${f}${value} -d '${spec.help}'`);
    }
  }
  return `${lines.join("\n")}\n`;
}
