import assert from "node:assert/strict";
import { test } from "node:test";
import { parseCommandLine, UsageError } from "./args.ts";

test("get: namespace, all namespaces, kubeconfig; flags before or after the command", () => {
  assert.deepEqual(parseCommandLine(["get"]), {
    kind: "get",
    namespace: undefined,
    allNamespaces: false,
    kubeconfig: undefined,
  });
  assert.deepEqual(parseCommandLine(["-n", "team-a", "get"]), {
    kind: "get",
    namespace: "team-a",
    allNamespaces: false,
    kubeconfig: undefined,
  });
  assert.deepEqual(parseCommandLine(["get", "-A", "--kubeconfig", "/k"]), {
    kind: "get",
    namespace: undefined,
    allNamespaces: true,
    kubeconfig: "/k",
  });
});

test("describe takes names; demo takes --keep; help in every spelling", () => {
  assert.deepEqual(parseCommandLine(["describe", "a", "b", "--namespace=x"]), {
    kind: "describe",
    names: ["a", "b"],
    namespace: "x",
    kubeconfig: undefined,
  });
  assert.deepEqual(parseCommandLine(["demo", "--keep"]), { kind: "demo", keep: true });
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
    [["describe"], /needs the name/],
    [["demo", "-n", "x"], /"demo" takes no --namespace/],
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
