import assert from "node:assert/strict";
import { test } from "node:test";
import { parseCommandLine, UsageError } from "./args.ts";

test("get: namespace, all namespaces, kubeconfig; flags before or after the command", () => {
  const listing = { context: undefined, names: [], output: "table", selector: undefined, watch: false };
  assert.deepEqual(parseCommandLine(["get"]), {
    kind: "get",
    namespace: undefined,
    allNamespaces: false,
    kubeconfig: undefined,
    ...listing,
  });
  assert.deepEqual(parseCommandLine(["-n", "team-a", "get"]), {
    kind: "get",
    namespace: "team-a",
    allNamespaces: false,
    kubeconfig: undefined,
    ...listing,
  });
  assert.deepEqual(parseCommandLine(["get", "-A", "--kubeconfig", "/k", "--context", "kind-a"]), {
    kind: "get",
    namespace: undefined,
    allNamespaces: true,
    kubeconfig: "/k",
    ...listing,
    context: "kind-a",
  });
});

test("describe takes names; help in every spelling", () => {
  assert.deepEqual(parseCommandLine(["describe", "a", "b", "--namespace=x"]), {
    kind: "describe",
    names: ["a", "b"],
    namespace: "x",
    kubeconfig: undefined,
    context: undefined,
  });
  assert.throws(
    () => parseCommandLine(["demo"]),
    /unknown command "demo"/,
    "the demo is not part of the shipped CLI",
  );
  for (const argv of [[], ["help"], ["-h"], ["get", "--help"]]) {
    assert.deepEqual(parseCommandLine(argv), { kind: "help" }, argv.join(" "));
  }
});

test("mistakes are usage errors that say what is wrong", () => {
  const cases: [string[], RegExp][] = [
    [["frobnicate"], /unknown command "frobnicate"/],
    [["get", "--bogus"], /Unknown option '--bogus'/],
    [["get", "-n", "a", "-A"], /-n and -A/],
    [["get", "x"], /use "describe x"/],
    [["get", "-o", "table"], /-o takes wide, json, yaml, name/],
    [["describe", "taskrun"], /needs the name of a run/],
    [["completion", "powershell"], /takes one shell: bash, zsh, fish/],
    [["doctor", "-o", "name"], /"doctor" prints -o json or -o yaml/],
    [["resolve", "git", "--timeout", "soon"], /--timeout takes a duration/],
    [["describe"], /needs the name/],
    [["resolve", "git", "-A"], /"resolve" takes no --all-namespaces/],
    [["describe", "x", "-A"], /"describe" takes no --all-namespaces/],
  ];
  for (const [argv, message] of cases) {
    assert.throws(
      () => parseCommandLine(argv),
      (err: unknown) => err instanceof UsageError && message.test(err.message),
      argv.join(" "),
    );
  }
});

test("get runs and customruns: both flavours, or the one asked for", () => {
  const scope = {
    namespace: undefined,
    allNamespaces: false,
    kubeconfig: undefined,
    context: undefined,
    names: [],
    output: "table",
    selector: undefined,
    watch: false,
  };
  assert.deepEqual(parseCommandLine(["get", "runs"]), {
    kind: "getRuns",
    flavours: ["Run", "CustomRun"],
    ...scope,
  });
  assert.deepEqual(parseCommandLine(["get", "Run", "-A"]), {
    kind: "getRuns",
    flavours: ["Run", "CustomRun"],
    ...scope,
    allNamespaces: true,
  });
  for (const argv of [
    ["get", "customruns"],
    ["get", "customrun"],
    ["get", "runs", "--kind", "CustomRun"],
    ["get", "customruns", "--kind=customrun"],
  ]) {
    assert.deepEqual(
      parseCommandLine(argv),
      { kind: "getRuns", flavours: ["CustomRun"], ...scope },
      argv.join(" "),
    );
  }
  assert.deepEqual(parseCommandLine(["get", "runs", "--kind", "Run", "-n", "ci"]), {
    kind: "getRuns",
    flavours: ["Run"],
    ...scope,
    namespace: "ci",
  });
  // the requests get has always listed, now also by name
  assert.deepEqual(parseCommandLine(["get", "resolutionrequests"]), { kind: "get", ...scope });
});

test("describe run: names, the flavour from the word or --kind; requests stay the default", () => {
  const scope = { namespace: "ci", kubeconfig: undefined, context: undefined };
  assert.deepEqual(parseCommandLine(["describe", "run", "wait-1", "-n", "ci"]), {
    kind: "describeRuns",
    names: ["wait-1"],
    flavour: undefined,
    ...scope,
  });
  assert.deepEqual(parseCommandLine(["describe", "runs", "a", "b", "--kind", "Run", "-n", "ci"]), {
    kind: "describeRuns",
    names: ["a", "b"],
    flavour: "Run",
    ...scope,
  });
  assert.deepEqual(parseCommandLine(["describe", "customrun", "a", "-n", "ci"]), {
    kind: "describeRuns",
    names: ["a"],
    flavour: "CustomRun",
    ...scope,
  });
  assert.deepEqual(parseCommandLine(["describe", "request", "run", "-n", "ci"]), {
    kind: "describe",
    names: ["run"],
    ...scope,
  });
});

test("run mistakes are usage errors too", () => {
  const cases: [string[], RegExp][] = [
    [["get", "runs", "x", "-A"], /names cannot be combined with -A/],
    [["get", "requests", "x", "-w"], /-w watches a listing/],
    [["get", "runs", "--kind", "TaskRun"], /--kind takes Run or CustomRun, not "TaskRun"/],
    [["get", "customruns", "--kind", "Run"], /contradict/],
    [["get", "--kind", "Run"], /--kind is for runs/],
    [["describe", "x", "--kind", "Run"], /--kind is for runs, e\.g\. "describe run x --kind CustomRun"/],
    [["describe", "run"], /"describe run" needs the name of a run/],
    [["resolve", "git", "--kind", "Run"], /"resolve" takes no --kind/],
  ];
  for (const [argv, message] of cases) {
    assert.throws(
      () => parseCommandLine(argv),
      (err: unknown) => err instanceof UsageError && message.test(err.message),
      argv.join(" "),
    );
  }
});

test("resolve: type and key=value params", () => {
  assert.deepEqual(
    parseCommandLine(["resolve", "git", "url=https://x/y.git", "pathInRepo=a=b.yaml", "-n", "ci"]),
    {
      kind: "resolve",
      resolverType: "git",
      params: [
        { name: "url", value: "https://x/y.git" },
        { name: "pathInRepo", value: "a=b.yaml" },
      ],
      namespace: "ci",
      kubeconfig: undefined,
      context: undefined,
      timeoutMs: 90_000,
    },
  );
  assert.throws(() => parseCommandLine(["resolve"]), /needs a resolver type/);
  assert.throws(() => parseCommandLine(["resolve", "git", "oops"]), /not key=value/);
  assert.equal(
    (parseCommandLine(["resolve", "git", "--timeout", "5s"]) as { timeoutMs: number }).timeoutMs,
    5000,
  );
});

test("durations as kubectl and Tekton write them; a bare number is seconds", () => {
  const timeout = (t: string) =>
    (parseCommandLine(["resolve", "git", "--timeout", t]) as { timeoutMs: number }).timeoutMs;
  assert.equal(timeout("1m"), 60_000);
  assert.equal(timeout("1m30s"), 90_000);
  assert.equal(timeout("500ms"), 500);
  assert.equal(timeout("45"), 45_000);
  assert.throws(() => timeout("0s"), /takes a duration/);
});

test("get by name, -o, -l, -w; describe taskrun and pipelinerun; version, doctor, completion", () => {
  const get = parseCommandLine(["get", "rr", "a", "b", "-o", "yaml", "-n", "x"]);
  assert.equal(get.kind, "get");
  assert.deepEqual(get.kind === "get" && [get.names, get.output], [["a", "b"], "yaml"]);
  const watch = parseCommandLine(["get", "runs", "-w", "-l", "app=x", "-o", "wide"]);
  assert.deepEqual(watch.kind === "getRuns" && [watch.watch, watch.selector, watch.output], [
    true,
    "app=x",
    "wide",
  ]);
  assert.deepEqual(parseCommandLine(["describe", "taskrun", "t1", "-n", "ci"]), {
    kind: "describeTekton",
    runKind: "TaskRun",
    names: ["t1"],
    namespace: "ci",
    kubeconfig: undefined,
    context: undefined,
  });
  assert.equal((parseCommandLine(["describe", "pr", "p1"]) as { runKind: string }).runKind, "PipelineRun");
  assert.deepEqual(parseCommandLine(["version", "--client"]), {
    kind: "version",
    clientOnly: true,
    output: "table",
    systemNamespace: "quarry-system",
    kubeconfig: undefined,
    context: undefined,
  });
  assert.deepEqual(parseCommandLine(["doctor", "--system-namespace", "q", "-o", "json"]), {
    kind: "doctor",
    output: "json",
    systemNamespace: "q",
    kubeconfig: undefined,
    context: undefined,
  });
  assert.deepEqual(parseCommandLine(["completion", "fish"]), { kind: "completion", shell: "fish" });
  assert.deepEqual(parseCommandLine(["--version"]), { kind: "clientVersion" });
});
