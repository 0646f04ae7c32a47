// The hostile-input table: one row per malformed or hostile ResolutionRequest
// or Run, with the reason it must end in and a pattern its message must match.
// A row marked `short` is in the CI subset (e2e/scenarios/hostile-input.test.ts);
// QUARRY_HOSTILE_FULL=1 (pnpm test:hostile) runs them all.
import type { Param, RunFlavour } from "@quarry/api";
import type { RunInput } from "@quarry/devcluster/runs";
import { CREDENTIAL_CASES, unusableToken } from "./cases-credentials.ts";
import { EGRESS_CASES } from "./cases-egress.ts";
import { HTTP_CASES } from "./cases-http.ts";
import { HUB_CASES } from "./cases-hub.ts";
import { PIPE_POLICY_CASES } from "./cases-pipe.ts";
import { REALM_CASES } from "./cases-realm.ts";
import type { CredentialCtx } from "./credentials-fixture.ts";
import type { EgressCtx } from "./egress-fixture.ts";
import type { HttpCtx } from "./http-fixture.ts";
import type { RealmCtx } from "./realm-fixture.ts";

export type Target = "git" | "bundles" | "cluster" | "pipe" | "http" | "hub" | "lifecycle" | "run";

/** What the suite's world holds, as the rows need it. */
export interface Ctx {
  namespace: string;
  /** A namespace no request may read (a Task and a Secret live there). */
  otherNamespace: string;
  /** The standard repository (task.yaml, symlinks, big/large.yaml, config/settings.yaml). */
  gitUrl: string;
  /** bomb.yaml, deep.yaml, binary.bin, nul.yaml, two-docs.yaml, empty.yaml, configmap.yaml, secret.json, huge.yaml. */
  hostileUrl: string;
  /** Wants the token in Secret git-creds. */
  privateUrl: string;
  /** Capture servers a gitToken is asked to reach (cases-credentials.ts). */
  credentials: CredentialCtx;
  /** A blocked name, a cross-origin redirect and a blocked token realm (cases-egress.ts). */
  egress: EgressCtx;
  /** A registry whose token realm is on another host, and a pull Secret for it (cases-realm.ts). */
  realm: RealmCtx;
  /** The http resolver's source, a capture its password Secret is not bound to, a blocked name (cases-http.ts). */
  http: HttpCtx;
  /** 127.0.0.2:PORT of the registry (127.0.0.1 is blocked: egress-fixture.ts). */
  registryHost: string;
  /** A good bundle holding task "build". */
  bundle: string;
}

export interface RequestInput {
  params: Param[];
  /** The resolver labels (default: the target's type label). */
  labels?: Record<string, string>;
}

export interface HostileCase {
  /** The object's name (DNS label). */
  name: string;
  target: Target;
  /** In the CI subset. */
  short?: boolean;
  request?: (c: Ctx) => RequestInput;
  run?: (c: Ctx) => { flavour: RunFlavour; input: Omit<RunInput, "name"> };
  /** The request's status.annotations["quarry.dev/reason"], or a run's Succeeded reason. */
  reason: string;
  message: RegExp;
  /** Refused by the apiserver at create (reason is then "Admission"): `message` matches its answer. */
  admission?: boolean;
}

export const ADMISSION = "Admission";

/** Params from pairs, so duplicates and odd values can be written. */
const P = (...pairs: [string, unknown][]): Param[] =>
  pairs.map(([name, value]) => ({ name, value }) as Param);
const MiB = 1024 * 1024;
const big = (n: number, ch = "a") => ch.repeat(n);

const git = (name: string, reason: string, message: RegExp, params: (c: Ctx) => Param[], short = false) =>
  ({
    name: `git-${name}`,
    target: "git",
    reason,
    message,
    request: (c) => ({ params: params(c) }),
    short,
  }) satisfies HostileCase;
const gitPath = (name: string, reason: string, message: RegExp, path: string, short = false) =>
  git(name, reason, message, (c) => P(["url", c.gitUrl], ["pathInRepo", path]), short);
const gitHostile = (name: string, reason: string, message: RegExp, path: string, short = false) =>
  git(name, reason, message, (c) => P(["url", c.hostileUrl], ["pathInRepo", path]), short);
const gitUrl = (name: string, reason: string, message: RegExp, url: string, short = false) =>
  git(name, reason, message, () => P(["url", url], ["pathInRepo", "task.yaml"]), short);
const gitRev = (name: string, message: RegExp, revision: string, short = false, reason = "InvalidParams") =>
  git(
    name,
    reason,
    message,
    (c) => P(["url", c.gitUrl], ["revision", revision], ["pathInRepo", "task.yaml"]),
    short,
  );

const GIT: HostileCase[] = [
  // wrong types, missing, unknown, duplicate params
  git("no-params", "InvalidParams", /param "pathInRepo" is required/, () => [], true),
  git(
    "url-array",
    "InvalidParams",
    /param "url" must be string/,
    (c) => P(["url", [c.gitUrl]], ["pathInRepo", "task.yaml"]),
    true,
  ),
  git("url-object", "InvalidParams", /param "url" must be string/, (c) =>
    P(["url", { u: c.gitUrl }], ["pathInRepo", "task.yaml"]),
  ),
  git("path-number", "InvalidParams", /param "pathInRepo" must be string/, (c) =>
    P(["url", c.gitUrl], ["pathInRepo", 42]),
  ),
  git("path-null", ADMISSION, /spec\.params\[1\]\.value: Required value/, (c) =>
    P(["url", c.gitUrl], ["pathInRepo", null]),
  ),
  git("path-empty", "InvalidParams", /param "pathInRepo": must not be empty/, (c) =>
    P(["url", c.gitUrl], ["pathInRepo", ""]),
  ),
  git("unknown-param", "InvalidParams", /param "subdir" is not supported/, (c) =>
    P(["url", c.gitUrl], ["pathInRepo", "task.yaml"], ["subdir", "x"]),
  ),
  git(
    "duplicate-url",
    ADMISSION,
    /param names must be unique/,
    (c) => P(["url", c.gitUrl], ["url", "https://evil.example/x.git"], ["pathInRepo", "task.yaml"]),
    true,
  ),
  git("duplicate-cache", ADMISSION, /param names must be unique/, (c) =>
    P(["url", c.gitUrl], ["pathInRepo", "task.yaml"], ["cache", "never"], ["cache", "always"]),
  ),
  git("bad-cache", "InvalidParams", /param "cache" must be one of always, never, auto/, (c) =>
    P(["url", c.gitUrl], ["pathInRepo", "task.yaml"], ["cache", "$(rm -rf /)"]),
  ),
  git("no-url", "InvalidParams", /param "url" is required/, () => P(["pathInRepo", "task.yaml"])),
  git("api-mode-token", "InvalidParams", /param "repo": Tekton's SCM API mode/, () =>
    P(["repo", "x"], ["token", "t"], ["pathInRepo", "task.yaml"]),
  ),
  git("bad-configkey", "InvalidParams", /param "configKey": git-resolver-config has no keys/, (c) =>
    P(["url", c.gitUrl], ["pathInRepo", "task.yaml"], ["configKey", "../../etc"]),
  ),
  // enormous params: near the apiserver's limit (admitted, refused by the resolver) and over it
  git("huge-path", "InvalidParams", /param "pathInRepo" must NOT have more than 4096 characters/, (c) =>
    P(["url", c.gitUrl], ["pathInRepo", big(MiB, "p")]),
  ),
  git("huge-url", "InvalidParams", /param "url" must NOT have more than 4096 characters/, () =>
    P(["url", `https://example.com/${big(MiB)}`], ["pathInRepo", "task.yaml"]),
  ),
  git("huge-revision", "InvalidParams", /param "revision" must NOT have more than 1024 characters/, (c) =>
    P(["url", c.gitUrl], ["revision", big(MiB, "r")], ["pathInRepo", "task.yaml"]),
  ),
  {
    name: "git-over-apiserver-limit",
    target: "git",
    reason: ADMISSION,
    admission: true,
    message: /too large|exceeds|limit/i,
    request: (c) => ({ params: P(["url", c.gitUrl], ["pathInRepo", big(4 * MiB)]) }),
  },
  {
    name: "git-too-many-params",
    target: "git",
    reason: ADMISSION,
    admission: true,
    message: /spec\.params: Too many: 200: must have at most 128 items/,
    request: () => ({ params: Array.from({ length: 200 }, (_, i) => ({ name: `p${i}`, value: "x" })) }),
  },
  // path traversal and symlink escapes
  gitPath(
    "dotdot",
    "InvalidParams",
    /param "pathInRepo": must not contain "\.\."/,
    "../../../../etc/passwd",
    true,
  ),
  gitPath("dotdot-middle", "InvalidParams", /must not contain "\.\."/, "tasks/build/../../../etc/shadow"),
  gitPath("dotdot-trailing", "InvalidParams", /must not contain "\.\."/, "tasks/.."),
  gitPath("backslash-dotdot", "NotFound", /param "pathInRepo": no such file/, "..\\..\\etc\\passwd"),
  gitPath("encoded-dotdot", "NotFound", /param "pathInRepo": no such file/, "%2e%2e/%2e%2e/etc/passwd"),
  gitPath("absolute", "NotFound", /param "pathInRepo": no such file "etc\/passwd"/, "/etc/passwd"),
  gitPath("root", "InvalidParams", /names the repository root/, "/./"),
  gitPath("dot-git", "NotFound", /param "pathInRepo"/, ".git/config"),
  gitPath("nul-byte", "InvalidParams", /must not contain control characters/, "task.yaml\u0000.png"),
  gitPath("newline", "InvalidParams", /must not contain control characters/, "task.yaml\nfoo"),
  gitPath(
    "symlink-outside",
    "Forbidden",
    /symlink "links\/outside\.yaml" points outside the repository/,
    "links/outside.yaml",
    true,
  ),
  gitPath("symlink-absolute", "Forbidden", /symlink "links\/absolute\.yaml"/, "links/absolute.yaml", true),
  gitPath(
    "symlink-loop",
    "NotFound",
    /more than 16 symlinks resolving "links\/loop-a" \(a loop\?\)/,
    "links/loop-a",
  ),
  gitPath("symlink-dangling", "NotFound", /links\/dangling\.yaml/, "links/dangling.yaml"),
  gitPath("symlink-dir-escape", "InvalidParams", /must not contain "\.\."/, "links/dir/../../../etc/passwd"),
  gitPath("directory", "NotFound", /param "pathInRepo"/, "tasks"),
  // argument injection in revisions
  gitRev(
    "rev-upload-pack",
    /param "revision": must not start with "-"/,
    "--upload-pack=touch /tmp/quarry-pwned",
    true,
  ),
  gitRev(
    "rev-config",
    /param "revision": must not start with "-"/,
    "-c core.sshCommand=touch /tmp/quarry-pwned",
    true,
  ),
  gitRev("rev-output", /param "revision": must not start with "-"/, "--output=/tmp/quarry-pwned"),
  gitRev("rev-exec", /param "revision": must not start with "-"/, "--exec=id"),
  gitRev("rev-space", /param "revision"/, "main --upload-pack=id"),
  gitRev("rev-dotdot", /param "revision"/, "main..feature"),
  gitRev("rev-reflog", /param "revision"/, "main@{1}"),
  gitRev("rev-newline", /param "revision"/, "main\n--upload-pack=id"),
  gitRev("rev-colon", /param "revision"/, "main:task.yaml"),
  gitRev("rev-caret", /param "revision"/, "main^{tree}"),
  gitRev(
    "rev-not-there",
    /param "revision": no branch, tag or ref named "nope-nope"/,
    "nope-nope",
    false,
    "NotFound",
  ),
  // URLs: schemes, local paths, hosts Quarry must not reach, credentials
  gitUrl(
    "url-file",
    "InvalidParams",
    /param "url": file:\/\/ URLs are not allowed/,
    "file:///etc/passwd",
    true,
  ),
  gitUrl("url-file-upper", "InvalidParams", /file:\/\/ URLs are not allowed/, "FILE:///etc"),
  gitUrl("url-local-path", "InvalidParams", /local paths are not allowed/, "/var/lib/git/tasks.git"),
  gitUrl("url-home", "InvalidParams", /local paths are not allowed/, "~/tasks.git"),
  gitUrl("url-dash", "InvalidParams", /must not start with "-"/, "--upload-pack=touch /tmp/x"),
  gitUrl("url-ext", "InvalidParams", /scheme ext is not supported/, "ext::sh -c touch% /tmp/quarry-pwned"),
  gitUrl("url-ssh", "InvalidParams", /ssh URLs are not supported/, "git@github.com:tektoncd/catalog.git"),
  gitUrl("url-ssh-scheme", "InvalidParams", /ssh URLs are not supported/, "ssh://git@example.com/x.git"),
  gitUrl("url-ftp", "InvalidParams", /scheme ftp is not supported/, "ftp://example.com/x.git"),
  gitUrl("url-javascript", "InvalidParams", /scheme javascript is not supported/, "javascript:alert(1)"),
  gitUrl("url-not-a-url", "InvalidParams", /not a URL/, "http://"),
  gitUrl(
    "url-fragment",
    "InvalidParams",
    /must not contain a fragment/,
    "https://example.com/x.git#--upload-pack=id",
  ),
  gitUrl(
    "metadata-v4",
    "Forbidden",
    /169\.254\.169\.254 is a link-local address/,
    "http://169.254.169.254/latest/meta-data/iam/",
    true,
  ),
  gitUrl("metadata-decimal", "Forbidden", /is a link-local address/, "http://2852039166/latest/meta-data"),
  gitUrl("metadata-hex", "Forbidden", /is a link-local address/, "http://0xa9fea9fe/latest"),
  gitUrl(
    "metadata-mapped-v6",
    "Forbidden",
    /is a link-local address/,
    "http://[::ffff:169.254.169.254]/latest",
  ),
  gitUrl("metadata-v6-link-local", "Forbidden", /is a link-local address/, "http://[fe80::a9fe:a9fe]/x.git"),
  gitUrl("metadata-aws-v6", "Forbidden", /is a link-local address/, "http://[fd00:ec2::254]/latest"),
  gitUrl(
    "metadata-gce-name",
    "Forbidden",
    /names a cloud instance metadata service/,
    "http://metadata.google.internal/computeMetadata/v1/",
  ),
  gitUrl(
    "url-creds",
    "InvalidParams",
    /param "url": must not contain credentials/,
    "https://ci-bot:hostile-url-password-93be5a@github.com/x.git",
    true,
  ),
  git("url-creds-local", "InvalidParams", /must not contain credentials/, (c) =>
    P(["url", c.gitUrl.replace("://", "://user:hostile-url-password-93be5a@")], ["pathInRepo", "task.yaml"]),
  ),
  gitUrl(
    "url-token-only",
    "InvalidParams",
    /must not contain credentials/,
    "https://hostile-url-password-93be5a@example.com/x.git",
  ),
  gitUrl("url-closed-port", "SourceUnavailable", /./, "http://127.0.0.2:1/x.git"),
  // non-Tekton content, bombs, huge and binary files
  gitPath(
    "not-tekton",
    "UnsupportedKind",
    /is no kind \(apiVersion none\), not a tekton\.dev Task/,
    "config/settings.yaml",
  ),
  gitHostile("yaml-bomb", "TooLarge", /YAML aliases, over the 1 MiB limit/, "bomb.yaml", true),
  gitHostile("deep-nesting", "UnsupportedKind", /is not YAML: nesting exceeded maxDepth/, "deep.yaml", true),
  gitHostile("binary", "UnsupportedKind", /is not YAML: null byte is not allowed/, "binary.bin", true),
  gitHostile("nul-content", "UnsupportedKind", /is not YAML: null byte is not allowed/, "nul.yaml"),
  gitHostile("two-docs", "UnsupportedKind", /holds 2 YAML documents, expected one/, "two-docs.yaml"),
  gitHostile("empty-file", "UnsupportedKind", /holds 0 YAML documents/, "empty.yaml"),
  gitHostile(
    "configmap",
    "UnsupportedKind",
    /is ConfigMap \(apiVersion v1\), not a tekton\.dev/,
    "configmap.yaml",
  ),
  gitHostile("secret-json", "UnsupportedKind", /is Secret/, "secret.json"),
  gitHostile("huge-file", "TooLarge", /over the 1 MiB limit/, "huge.yaml", true),
  gitPath("large-file", "TooLarge", /over the 1 MiB limit/, "big/large.yaml"),
  // credentials: wrong, malformed names, another namespace's Secret
  git(
    "wrong-token",
    "Forbidden",
    /param "gitToken": .* refused the credentials \(HTTP 401\): the token was rejected/,
    (c) => P(["url", c.privateUrl], ["pathInRepo", "task.yaml"], ["gitToken", "wrong-creds"]),
    true,
  ),
  git("no-token", "Forbidden", /gitToken/, (c) => P(["url", c.privateUrl], ["pathInRepo", "task.yaml"])),
  // Secret errors: one message whatever is wrong (cases-credentials.ts)
  git("missing-secret", "Forbidden", unusableToken("nope-creds", "token", "http://[^ ]+"), (c) =>
    P(["url", c.privateUrl], ["pathInRepo", "task.yaml"], ["gitToken", "nope-creds"]),
  ),
  git("wrong-key", "Forbidden", unusableToken("git-creds", "nokey", "http://[^ ]+"), (c) =>
    P(
      ["url", c.privateUrl],
      ["pathInRepo", "task.yaml"],
      ["gitToken", "git-creds"],
      ["gitTokenKey", "nokey"],
    ),
  ),
  git(
    "secret-other-ns",
    "InvalidParams",
    /param "gitToken": .* is not a valid Secret name/,
    (c) =>
      P(
        ["url", c.privateUrl],
        ["pathInRepo", "task.yaml"],
        ["gitToken", `${c.otherNamespace}/elsewhere-creds`],
      ),
    true,
  ),
  git("secret-only-elsewhere", "Forbidden", unusableToken("elsewhere-creds", "token", "http://[^ ]+"), (c) =>
    P(["url", c.privateUrl], ["pathInRepo", "task.yaml"], ["gitToken", "elsewhere-creds"]),
  ),
  git("secret-key-traversal", "InvalidParams", /param "gitTokenKey": .* is not a valid Secret key/, (c) =>
    P(
      ["url", c.privateUrl],
      ["pathInRepo", "task.yaml"],
      ["gitToken", "git-creds"],
      ["gitTokenKey", "../token"],
    ),
  ),
  git("key-without-secret", "InvalidParams", /param "gitTokenKey" needs "gitToken"/, (c) =>
    P(["url", c.privateUrl], ["pathInRepo", "task.yaml"], ["gitTokenKey", "token"]),
  ),
];

const bundles = (name: string, reason: string, message: RegExp, params: (c: Ctx) => Param[], short = false) =>
  ({
    name: `bundle-${name}`,
    target: "bundles",
    reason,
    message,
    request: (c) => ({ params: params(c) }),
    short,
  }) satisfies HostileCase;
const bref = (name: string, reason: string, message: RegExp, ref: (c: Ctx) => string, short = false) =>
  bundles(name, reason, message, (c) => P(["bundle", ref(c)], ["name", "build"]), short);
const ZERO = `sha256:${"0".repeat(64)}`;

const BUNDLES: HostileCase[] = [
  bundles("no-params", "InvalidParams", /param "bundle" is required/, () => [], true),
  bundles("no-name", "InvalidParams", /param "name" is required/, (c) => P(["bundle", c.bundle])),
  bundles(
    "name-array",
    "InvalidParams",
    /param "name" must be string/,
    (c) => P(["bundle", c.bundle], ["name", ["build"]]),
    true,
  ),
  bundles("bundle-object", "InvalidParams", /param "bundle" must be string/, () =>
    P(["bundle", { ref: "x" }], ["name", "build"]),
  ),
  bundles("unknown-param", "InvalidParams", /param "digest" is not supported/, (c) =>
    P(["bundle", c.bundle], ["name", "build"], ["digest", ZERO]),
  ),
  bundles("duplicate-name", ADMISSION, /param names must be unique/, (c) =>
    P(["bundle", c.bundle], ["name", "build"], ["name", "other"]),
  ),
  bundles(
    "name-traversal",
    "NotFound",
    /param "name": no task named "\.\.\/\.\.\/build"/,
    (c) => P(["bundle", c.bundle], ["name", "../../build"]),
    true,
  ),
  bundles("kind-injection", "NotFound", /param "name": no task; rm -rf \/ named "build"/, (c) =>
    P(["bundle", c.bundle], ["name", "build"], ["kind", "task; rm -rf /"]),
  ),
  bundles("huge-name", "InvalidParams", /param "name" must NOT have more than 253 characters/, (c) =>
    P(["bundle", c.bundle], ["name", big(MiB)]),
  ),
  bref(
    "digest-short",
    "InvalidParams",
    /param "bundle"/,
    (c) => `${c.registryHost}/hostile/good@sha256:abc`,
    true,
  ),
  bref(
    "digest-md5",
    "InvalidParams",
    /param "bundle"/,
    (c) => `${c.registryHost}/hostile/good@md5:${"0".repeat(32)}`,
  ),
  bref(
    "digest-upper",
    "InvalidParams",
    /param "bundle"/,
    (c) => `${c.registryHost}/hostile/good@sha256:${"A".repeat(64)}`,
  ),
  bref("digest-absent", "NotFound", /not found/, (c) => `${c.registryHost}/hostile/good@${ZERO}`, true),
  bref(
    "tag-and-bad-digest",
    "InvalidParams",
    /param "bundle"/,
    (c) => `${c.registryHost}/hostile/good:v1@sha256:zz`,
  ),
  bref("upper-repo", "InvalidParams", /param "bundle"/, (c) => `${c.registryHost}/Hostile/Good:v1`),
  bref("traversal-repo", "InvalidParams", /param "bundle"/, (c) => `${c.registryHost}/../../v2/_catalog:v1`),
  bref("url-scheme", "InvalidParams", /param "bundle"/, (c) => `http://${c.registryHost}/hostile/good:v1`),
  bref("file-ref", "InvalidParams", /param "bundle"/, () => "file:///etc/passwd"),
  bref(
    "creds-in-ref",
    "InvalidParams",
    /param "bundle"/,
    (c) => `user:hostile-url-password-93be5a@${c.registryHost}/hostile/good:v1`,
    true,
  ),
  bref(
    "metadata-registry",
    "Forbidden",
    /registry 169\.254\.169\.254 is a link-local address/,
    () => "169.254.169.254/latest/meta-data:v1",
    true,
  ),
  bref("metadata-registry-v6", "Forbidden", /is a link-local address/, () => "[fe80::1]:5000/x/y:v1"),
  bref("closed-port", "SourceUnavailable", /./, () => "127.0.0.2:1/x/y:v1"),
  bref("unknown-tag", "NotFound", /not found/, (c) => `${c.registryHost}/hostile/good:nope`),
  bundles(
    "secret-other-ns",
    "InvalidParams",
    /param "secret"/,
    (c) => P(["bundle", c.bundle], ["name", "build"], ["secret", `${c.otherNamespace}/elsewhere-creds`]),
    true,
  ),
  bundles("sa-other-ns", "InvalidParams", /param "serviceAccount"/, (c) =>
    P(["bundle", c.bundle], ["name", "build"], ["serviceAccount", `${c.otherNamespace}/default`]),
  ),
  bundles(
    "secret-not-readable",
    "Forbidden",
    /^param "secret": Secret [-a-z0-9]+\/wrong-creds cannot be used as an image pull Secret: it is missing, unreadable by the bundle resolver, or not a valid/,
    (c) => P(["bundle", c.bundle], ["name", "build"], ["secret", "wrong-creds"]),
  ),
];

const cluster = (name: string, reason: string, message: RegExp, params: (c: Ctx) => Param[], short = false) =>
  ({
    name: `cluster-${name}`,
    target: "cluster",
    reason,
    message,
    request: (c) => ({ params: params(c) }),
    short,
  }) satisfies HostileCase;

const CLUSTER: HostileCase[] = [
  cluster("no-params", "InvalidParams", /param "name" is required/, () => [], true),
  cluster("name-array", "InvalidParams", /param "name" must be string/, () => P(["name", ["own"]])),
  cluster("unknown-param", "InvalidParams", /param "colour" is not supported/, () =>
    P(["name", "own"], ["colour", "red"]),
  ),
  cluster("duplicate-name", ADMISSION, /param names must be unique/, () =>
    P(["name", "own"], ["name", "foreign"]),
  ),
  cluster(
    "kind-secret",
    "InvalidParams",
    /param "kind" must be one of task, pipeline, stepaction/,
    () => P(["kind", "secret"], ["name", "own"]),
    true,
  ),
  cluster("kind-configmap", "InvalidParams", /param "kind" must be one of/, () =>
    P(["kind", "configmaps"], ["name", "kube-root-ca.crt"]),
  ),
  cluster(
    "other-namespace",
    "Forbidden",
    /access to specified namespace [-a-z0-9]+ is not allowed/,
    (c) => P(["name", "foreign"], ["namespace", c.otherNamespace]),
    true,
  ),
  cluster(
    "kube-system",
    "Forbidden",
    /access to specified namespace kube-system is not allowed/,
    () => P(["name", "x"], ["namespace", "kube-system"]),
    true,
  ),
  cluster("namespace-traversal", "InvalidParams", /param "namespace" must match pattern/, () =>
    P(["name", "own"], ["namespace", "../kube-system"]),
  ),
  cluster("name-traversal", "InvalidParams", /param "name" must match pattern/, () =>
    P(["name", "../../secrets/x"]),
  ),
  cluster("huge-name", "InvalidParams", /param "name" must NOT have more than 253 characters/, () =>
    P(["name", big(MiB)]),
  ),
  cluster("missing", "NotFound", /task .*\/absent not found/, () => P(["name", "absent"])),
];

const pipe = (name: string, reason: string, message: RegExp, params: (c: Ctx) => Param[], short = false) =>
  ({
    name: `pipe-${name}`,
    target: "pipe",
    reason,
    message,
    request: (c) => ({ params: params(c) }),
    short,
  }) satisfies HostileCase;
const ONE_FILE = JSON.stringify([{ file: "/out/x", kind: "ConfigMap", key: "x" }]);
const own = (...extra: [string, unknown][]) =>
  P(
    ["strategy", "gen"],
    ["strategyKind", "PipeStrategy"],
    ["files", JSON.stringify([{ file: "/out/x", kind: "ConfigMap", key: "x" }])],
    ...extra,
  );

const PIPE: HostileCase[] = [
  pipe("no-pipe", "PipeNotFound", /Pipe "absent" does not exist/, () => P(["pipe", "absent"]), true),
  pipe("pipe-traversal", "InvalidParams", /param "pipe": "\.\.\/good" is not a valid object name/, () =>
    P(["pipe", "../good"]),
  ),
  pipe(
    "undeclared",
    "UnknownParam",
    /param "colour" is not declared/,
    () => P(["pipe", "good"], ["cn", "a"], ["colour", "red"]),
    true,
  ),
  pipe("missing-param", "MissingParam", /"cn"/, () => P(["pipe", "good"])),
  pipe("duplicate-param", ADMISSION, /param names must be unique/, () =>
    P(["pipe", "good"], ["cn", "a"], ["cn", "b"]),
  ),
  pipe("array-for-string", "InvalidParamType", /"cn"/, () => P(["pipe", "good"], ["cn", ["a", "b"]]), true),
  pipe("object-for-array", "InvalidParamType", /"tags"/, () =>
    P(["pipe", "good"], ["cn", "a"], ["tags", { a: "b" }]),
  ),
  pipe("huge-value", "ParamsTooLarge", /"cn"/, () => P(["pipe", "good"], ["cn", big(100 * 1024)]), true),
  pipe("many-elements", "ParamsTooLarge", /"tags"/, () =>
    P(["pipe", "good"], ["cn", "a"], ["tags", Array.from({ length: 2000 }, () => "t")]),
  ),
  pipe("files-not-json", "InvalidParams", /param "files" is not YAML/, () =>
    own(["cn", "a"]).map((p) => (p.name === "files" ? { ...p, value: "[{" } : p)),
  ),
  pipe(
    "files-outside",
    "InvalidPipe",
    /outside the emptyDir/,
    () =>
      own(["cn", "a"]).map((p) =>
        p.name === "files"
          ? {
              ...p,
              value: JSON.stringify([
                { file: "/var/run/secrets/kubernetes.io/serviceaccount/token", kind: "Secret", key: "t" },
              ]),
            }
          : p,
      ),
    true,
  ),
  pipe("files-dotdot", "InvalidPipe", /param "files"/, () =>
    own(["cn", "a"]).map((p) =>
      p.name === "files"
        ? { ...p, value: JSON.stringify([{ file: "/out/../etc/passwd", kind: "Secret", key: "t" }]) }
        : p,
    ),
  ),
  pipe("files-bad-key", "InvalidPipe", /key "\.\.\/x"/, () =>
    own(["cn", "a"]).map((p) =>
      p.name === "files"
        ? { ...p, value: JSON.stringify([{ file: "/out/x", kind: "Secret", key: "../x" }]) }
        : p,
    ),
  ),
  pipe("strategy-missing", "StrategyNotFound", /PipeStrategy "absent" does not exist/, () =>
    P(["strategy", "absent"], ["strategyKind", "PipeStrategy"], ["files", ONE_FILE]),
  ),
  pipe(
    "cluster-strategy-missing",
    "StrategyNotFound",
    /ClusterPipeStrategy "absent-hostile" does not exist/,
    () => P(["strategy", "absent-hostile"], ["strategyKind", "ClusterPipeStrategy"], ["files", ONE_FILE]),
  ),
  pipe("subst-reference", "UnknownParam", /\$\(params/, () =>
    P(["pipe", "good"], ["cn", "a"], ["$(params.cn)", "x"]),
  ),
];

const lifecycle = (
  name: string,
  reason: string,
  message: RegExp,
  labels: Record<string, string>,
  short = false,
) =>
  ({
    name: `lc-${name}`,
    target: "lifecycle",
    reason,
    message,
    request: () => ({ params: P(["x", "y"]), labels }),
    short,
  }) satisfies HostileCase;

const LIFECYCLE: HostileCase[] = [
  lifecycle(
    "no-label",
    "MissingResolverLabel",
    /neither the "resolution\.tekton\.dev\/type" label nor its alias/,
    {},
    true,
  ),
  lifecycle("empty-label", "MissingResolverLabel", /neither/, { "resolution.tekton.dev/type": "" }),
  lifecycle("empty-alias", "MissingResolverLabel", /neither/, { "resolution.tekton.dev/resolver": "" }),
  lifecycle("other-labels-only", "MissingResolverLabel", /neither/, { "app.kubernetes.io/name": "git" }),
  lifecycle(
    "unknown-type",
    "NoResolver",
    /no resolver for type nonesuch answered within 1m30s/,
    { "resolution.tekton.dev/type": "nonesuch" },
    true,
  ),
  // an alias label naming a type nobody serves
  lifecycle("unknown-alias", "NoResolver", /no resolver for type tarball answered/, {
    "resolution.tekton.dev/resolver": "tarball",
  }),
];

const WAIT = { apiVersion: "wait.testing.tekton.dev/v1beta1", kind: "Wait" };
const PIPE_REF = { apiVersion: "quarry.dev/v1alpha1", kind: "Pipe" };
const run = (
  name: string,
  reason: string,
  message: RegExp,
  input: Omit<RunInput, "name">,
  flavour: RunFlavour = "CustomRun",
  short = false,
) =>
  ({
    name: `run-${name}`,
    target: "run",
    reason,
    message,
    run: () => ({ flavour, input }),
    short,
  }) satisfies HostileCase;

const RUN: HostileCase[] = [
  run(
    "wait-no-duration",
    "MissingDuration",
    /The duration param was not passed/,
    { ref: WAIT },
    "CustomRun",
    true,
  ),
  run("wait-duration-array", "InvalidDuration", /it must be a string/, {
    ref: WAIT,
    params: P(["duration", ["1s"]]),
  }),
  run(
    "wait-duration-object",
    "InvalidDuration",
    /it must be a string/,
    { ref: WAIT, params: P(["duration", { d: "1s" }]) },
    "Run",
  ),
  run("wait-duration-injection", "InvalidDuration", /invalid duration/, {
    ref: WAIT,
    params: P(["duration", "1s; rm -rf /"]),
  }),
  run(
    "wait-duration-huge",
    "InvalidDuration",
    /invalid duration/,
    { ref: WAIT, params: P(["duration", big(200 * 1024, "9")]) },
    "Run",
  ),
  run("wait-duration-overflow", "InvalidDuration", /duration/, {
    ref: WAIT,
    params: P(["duration", "9999999999999999999h"]),
  }),
  run(
    "pipe-absent",
    "PipeNotFound",
    /Pipe "absent" does not exist/,
    { ref: { ...PIPE_REF, name: "absent" } },
    "CustomRun",
    true,
  ),
  run(
    "pipe-undeclared",
    "UnknownParam",
    /param "colour" is not declared/,
    { ref: { ...PIPE_REF, name: "good" }, params: P(["cn", "a"], ["colour", "red"]) },
    "Run",
  ),
  run("pipe-huge-param", "ParamsTooLarge", /"cn"/, {
    ref: { ...PIPE_REF, name: "good" },
    params: P(["cn", big(100 * 1024)]),
  }),
  {
    name: "run-too-many-params",
    target: "run",
    reason: ADMISSION,
    admission: true,
    message: /spec\.params: Too many: 300: must have at most 256 items/,
    run: () => ({
      flavour: "CustomRun",
      input: { ref: WAIT, params: Array.from({ length: 300 }, (_, i) => ({ name: `p${i}`, value: "x" })) },
    }),
  },
  {
    name: "run-duplicate-params",
    target: "run",
    reason: ADMISSION,
    admission: true,
    message: /param names must be unique/,
    run: () => ({ flavour: "Run", input: { ref: WAIT, params: P(["duration", "1s"], ["duration", "2s"]) } }),
  },
];

export const CASES: readonly HostileCase[] = [
  ...GIT,
  ...BUNDLES,
  ...CLUSTER,
  ...PIPE,
  ...LIFECYCLE,
  ...RUN,
  ...CREDENTIAL_CASES,
  ...PIPE_POLICY_CASES,
  ...EGRESS_CASES,
  ...REALM_CASES,
  ...HTTP_CASES,
  ...HUB_CASES,
];
