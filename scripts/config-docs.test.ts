// The documented defaults of every ConfigMap key are the code's: each key table in
// docs/operator-guide.md and in the services' READMEs is parsed, and each literal default it
// states (the cell's first `code`, e.g. `30s`, `1000`, `2Mi`) is fed to the service's own config
// parser as that key's value. Setting a key to its default must change nothing: the result equals
// the code's default config (the parse of an empty ConfigMap, and the exported defaults where the
// code has them). Keys documented that the code does not read, and keys the code declares that a
// table leaves out, fail too.
//
// scripts/ is no workspace package (it has no dependencies of its own), so it reads the services'
// config modules by path, as it reads the docs.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { parseDuration } from "../libs/kube/src/index.ts";
import { defaultRuntimeConfig, parseResolverConfig } from "../libs/resolver-sdk/src/config.ts";
import { RUNTIME_CONFIG_KEYS } from "../libs/resolver-sdk/src/config-keys.ts";
import { parseBlockedNetworks } from "../libs/resolver-sdk/src/index.ts";
import {
  bundleConfigKeys,
  defaultBundleConfig,
  parseBundleConfig,
} from "../services/bundle-resolver/src/config.ts";
import { clusterConfigKeys, clusterPolicy } from "../services/cluster-resolver/src/config.ts";
import { DEFAULT_API_TOKEN_KEY } from "../services/git-resolver/src/api-mode/params.ts";
import {
  defaultGitConfig,
  TEKTON_FETCH_TIMEOUT_MS as GIT_FETCH_TIMEOUT_MS,
  gitConfigKeys,
  parseGitConfig,
} from "../services/git-resolver/src/config.ts";
import {
  TEKTON_FETCH_TIMEOUT_MS as HTTP_FETCH_TIMEOUT_MS,
  httpConfigKeys,
  parseHttpConfig,
} from "../services/http-resolver/src/config.ts";
import { hubConfigKeys, parseHubConfig } from "../services/hub-resolver/src/config.ts";
import { defaultLifecycleConfig, parseLifecycleConfig } from "../services/lifecycle-controller/src/config.ts";
import { defaultPipeConfig, parsePipeConfig } from "../services/pipe-resolver/src/config.ts";
import {
  defaultRunControllerConfig,
  parseRunControllerConfig,
} from "../services/run-controller/src/config.ts";

const REPO = join(import.meta.dirname, "..");
const read = (path: string) => readFileSync(join(REPO, path), "utf8");

export interface KeyRow {
  keys: string[];
  /** The stated default, when the cell states one literally; undefined for "none", "all", prose. */
  literal: Map<string, string>;
}

const cells = (line: string) =>
  line
    .trim()
    .replace(/^\||\|$/g, "")
    .split("|")
    .map((c) => c.trim());

/** Config-key names in a key cell: `a`, `b` / `c`; `-x` continues the previous key's stem (`api-token-secret-name`, `-key`). */
export function keysOf(cell: string): string[] {
  const out: string[] = [];
  for (const m of cell.matchAll(/`([^`]+)`/g)) {
    const name = m[1] ?? "";
    if (name.startsWith("-") && out.length) {
      const prev = out[out.length - 1] ?? "";
      out.push(prev.slice(0, prev.lastIndexOf("-")) + name);
    } else if (/^[a-z][a-z0-9-]*$/.test(name)) out.push(name);
  }
  return out;
}

/**
 * The literal default of each key in a row: the default cell's first code span when the cell
 * starts with one; for a row of several keys whose cell lists one value per key in parentheses
 * (`Tekton's (`2s`, `2.0`, …)`), those values in order.
 */
export function literalDefaults(keys: string[], cell: string): Map<string, string> {
  const out = new Map<string, string>();
  const spans = [...cell.matchAll(/`([^`]*)`/g)].map((m) => m[1] ?? "");
  const listed = /\(((?:`[^`]*`(?:, )?)+)\)/.exec(cell);
  if (keys.length > 1 && listed?.[1]) {
    const values = [...listed[1].matchAll(/`([^`]*)`/g)].map((m) => m[1] ?? "");
    if (values.length === keys.length) for (const [i, k] of keys.entries()) out.set(k, values[i] ?? "");
    return out;
  }
  if (cell.startsWith("`") && spans[0] !== undefined) for (const k of keys) out.set(k, spans[0]);
  return out;
}

/** The first table after the heading that starts with `heading`, as key rows. */
export function keyTable(markdown: string, heading: string): KeyRow[] {
  const lines = markdown.split("\n");
  const at = lines.findIndex((l) => /^#{2,4} /.test(l) && l.replace(/^#+ /, "").startsWith(heading));
  assert.ok(at >= 0, `no heading "${heading}"`);
  const rows: KeyRow[] = [];
  let header: string[] | undefined;
  for (const line of lines.slice(at + 1)) {
    if (/^#{2,4} /.test(line)) break;
    if (!line.startsWith("|")) {
      if (header) break;
      continue;
    }
    if (!header) {
      header = cells(line).map((c) => c.toLowerCase());
      continue;
    }
    if (/^\|\s*-/.test(line)) continue;
    const row = cells(line);
    const d = header.indexOf("default");
    assert.ok(d > 0, `a table under "${heading}" without a default column`);
    const keys = keysOf(row[0] ?? "");
    rows.push({ keys, literal: literalDefaults(keys, row[d] ?? "") });
  }
  assert.ok(rows.length > 0, `no key table under "${heading}"`);
  return rows;
}

type Data = Record<string, string>;

interface Checked {
  /** The config the code makes of a ConfigMap holding `data`, reduced to what a key can change. */
  parse: (data: Data) => unknown;
  /** The code's default config, as `parse` shapes it. */
  defaults: unknown;
  /** Keys the code reads (besides the runtime's, for resolvers). */
  known: readonly string[];
  /** Keys whose default is applied outside the parser: check the literal against the code's constant. */
  applied?: Readonly<Record<string, (literal: string) => void>>;
  /** Keys documented in this table that belong to the runtime (the SDK's table covers them). */
  runtimeKeysAllowed?: boolean;
}

const named = (list: readonly (string | RegExp)[]) => list.filter((k): k is string => typeof k === "string");
const duration = (want: number) => (literal: string) => assert.equal(parseDuration(literal), want);
// egress leaves blocked-networks unset in the parsed config and applies the default where it connects
const blockedNetworks = (literal: string) =>
  assert.deepEqual(
    parseBlockedNetworks("blocked-networks", literal),
    parseBlockedNetworks("blocked-networks", undefined),
  );

const SERVICES: Readonly<Record<string, Checked>> = {
  runtime: {
    parse: (data) => parseResolverConfig(data, {}).runtime,
    defaults: defaultRuntimeConfig,
    known: RUNTIME_CONFIG_KEYS,
  },
  lifecycle: {
    parse: (data) => parseLifecycleConfig(data, defaultLifecycleConfig),
    defaults: defaultLifecycleConfig,
    known: ["default-maximum-resolution-timeout", "completed-request-ttl"],
  },
  run: {
    parse: (data) => parseRunControllerConfig(data, defaultRunControllerConfig),
    defaults: defaultRunControllerConfig,
    known: ["enforcement", "initial-update-timeout", "enforcement-grace", "default-timeout", "kinds"],
  },
  git: {
    parse: parseGitConfig,
    defaults: defaultGitConfig,
    known: named(gitConfigKeys.known),
    applied: {
      // unset, the resolver's timeout() falls back to resolution-timeout when set, else Tekton's 1m
      "fetch-timeout": duration(GIT_FETCH_TIMEOUT_MS),
      // a request's scmType, else scm-type, else github (api-mode/params.ts)
      "scm-type": (literal) => assert.equal(literal, "github"),
      "api-token-secret-key": (literal) => assert.equal(literal, DEFAULT_API_TOKEN_KEY),
    },
  },
  bundle: {
    parse: parseBundleConfig,
    defaults: defaultBundleConfig,
    known: named(bundleConfigKeys.known),
    applied: { "blocked-networks": blockedNetworks },
  },
  cluster: {
    parse: (data) => clusterPolicy(data),
    defaults: clusterPolicy({}),
    known: named(clusterConfigKeys.known),
  },
  http: {
    parse: parseHttpConfig,
    defaults: parseHttpConfig({}),
    known: named(httpConfigKeys.known),
    applied: { "fetch-timeout": duration(HTTP_FETCH_TIMEOUT_MS), "blocked-networks": blockedNetworks },
  },
  hub: {
    parse: parseHubConfig,
    defaults: parseHubConfig({}),
    known: named(hubConfigKeys.known),
    applied: { "blocked-networks": blockedNetworks },
  },
  pipe: {
    parse: parsePipeConfig,
    defaults: defaultPipeConfig,
    known: [
      "pending-timeout",
      "wait-image",
      "wait-image-pull-policy",
      "host-network",
      "node-name",
      "tolerations",
      "pod-policy-allow",
      "allowed-service-accounts",
    ],
  },
};

/** Every key table, by document and heading, and whose config it documents. */
const TABLES: readonly { doc: string; heading: string; service: keyof typeof SERVICES; complete: boolean }[] =
  [
    { doc: "docs/operator-guide.md", heading: "lifecycle-controller:", service: "lifecycle", complete: true },
    { doc: "docs/operator-guide.md", heading: "run-controller:", service: "run", complete: true },
    {
      doc: "docs/operator-guide.md",
      heading: "Every resolver: the SDK's keys",
      service: "runtime",
      complete: true,
    },
    { doc: "docs/operator-guide.md", heading: "git-resolver:", service: "git", complete: true },
    { doc: "docs/operator-guide.md", heading: "bundle-resolver:", service: "bundle", complete: true },
    { doc: "docs/operator-guide.md", heading: "http-resolver:", service: "http", complete: true },
    { doc: "docs/operator-guide.md", heading: "hub-resolver:", service: "hub", complete: true },
    { doc: "docs/operator-guide.md", heading: "cluster-resolver:", service: "cluster", complete: true },
    { doc: "docs/operator-guide.md", heading: "pipe-resolver:", service: "pipe", complete: true },
    {
      doc: "services/lifecycle-controller/README.md",
      heading: "Config",
      service: "lifecycle",
      complete: true,
    },
    { doc: "services/run-controller/README.md", heading: "Config", service: "run", complete: true },
    { doc: "services/git-resolver/README.md", heading: "Config", service: "git", complete: false },
    { doc: "services/bundle-resolver/README.md", heading: "Config", service: "bundle", complete: true },
    { doc: "services/http-resolver/README.md", heading: "Config", service: "http", complete: true },
    { doc: "services/pipe-resolver/README.md", heading: "Config", service: "pipe", complete: true },
  ];

test("keysOf and literalDefaults read the tables' cells", () => {
  assert.deepEqual(keysOf("`proxy` / `no-proxy`"), ["proxy", "no-proxy"]);
  assert.deepEqual(keysOf("`api-token-secret-name`, `-key`, `-namespace`"), [
    "api-token-secret-name",
    "api-token-secret-key",
    "api-token-secret-namespace",
  ]);
  assert.deepEqual(
    [...literalDefaults(["cache-size"], "`1000`, or `max-size` of …")],
    [["cache-size", "1000"]],
  );
  assert.deepEqual([...literalDefaults(["proxy", "no-proxy"], "the process's `HTTPS_PROXY`/`NO_PROXY`")], []);
  assert.deepEqual(
    [...literalDefaults(["a", "b"], "Tekton's (`2s`, `2.0`) once one is set; none set: `max-attempts`")],
    [
      ["a", "2s"],
      ["b", "2.0"],
    ],
  );
});

for (const { doc, heading, service, complete } of TABLES) {
  test(`${doc} "${heading}": every documented default is the code's`, () => {
    const checked = SERVICES[service];
    assert.ok(checked);
    const rows = keyTable(read(doc), heading);
    const documented = rows.flatMap((r) => r.keys);
    const runtime = service !== "runtime" && service !== "lifecycle" && service !== "run";
    const unknown = documented.filter(
      (k) => !checked.known.includes(k) && !(runtime && RUNTIME_CONFIG_KEYS.includes(k)),
    );
    assert.deepEqual(unknown, [], "documented keys the code does not read");
    if (complete) {
      const missing = checked.known.filter((k) => !documented.includes(k));
      assert.deepEqual(missing, [], "keys the code reads that the table leaves out");
    }
    assert.deepEqual(checked.parse({}), checked.defaults, "an empty ConfigMap is the code's defaults");
    // Tekton's backoff keys switch the retry schedule on when any is set: their documented values
    // must all give the same schedule, the code's defaults for the others
    const backoff = rows.find((r) => r.keys.includes("backoff-steps"));
    if (backoff?.literal.size) {
      const all = checked.parse(Object.fromEntries(backoff.literal));
      for (const [key, value] of backoff.literal) {
        assert.deepEqual(checked.parse({ [key]: value }), all, `${key}: ${value} is the code's default`);
      }
    }
    for (const row of rows) {
      if (row === backoff) continue;
      for (const [key, value] of row.literal) {
        const applied = checked.applied?.[key];
        if (applied) applied(value);
        else
          assert.deepEqual(
            checked.parse({ [key]: value }),
            checked.defaults,
            `${key}: "${value}" as documented is not the code's default`,
          );
      }
    }
  });
}
