// Which token goes where in API mode: the operator's only to its configured server's API.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Params } from "@quarry/resolver-sdk";
import { parseGitConfig, settingsFor } from "../config.ts";
import { parseApiRequest } from "./params.ts";
import { chooseToken, type TokenChoice } from "./token-choice.ts";

const OPERATOR = { "api-token-secret-name": "api-token", "api-token-secret-key": "t" };

function choose(config: Record<string, string>, params: Params): TokenChoice {
  const settings = settingsFor(parseGitConfig(config), undefined)!;
  return chooseToken(
    parseApiRequest({ repo: "r", org: "o", pathInRepo: "a", ...params }, settings),
    settings.api,
  );
}

test("token choice", () => {
  const operator: TokenChoice = { kind: "operator", namespace: undefined, secret: "api-token", key: "t" };
  const cases: [string, Record<string, string>, Params, TokenChoice | RegExp][] = [
    [
      "no serverURL: the configured server gets the operator's token",
      { "server-url": "https://ghe.corp", ...OPERATOR },
      {},
      operator,
    ],
    [
      "serverURL exactly the configured one",
      { "server-url": "https://ghe.corp", ...OPERATOR },
      { serverURL: "https://ghe.corp/" },
      operator,
    ],
    ["github.com by default", OPERATOR, {}, operator],
    [
      "namespace from the config",
      { ...OPERATOR, "api-token-secret-namespace": "ops" },
      {},
      { ...operator, namespace: "ops" },
    ],
    ["key defaults to token", { "api-token-secret-name": "api-token" }, {}, { ...operator, key: "token" }],
    [
      "another serverURL: refused (CVE-2026-40161)",
      { "server-url": "https://ghe.corp", ...OPERATOR },
      { serverURL: "https://evil.example" },
      /^param "serverURL": https:\/\/evil\.example is not the server-url/,
    ],
    [
      "a serverURL with no server-url configured",
      OPERATOR,
      { serverURL: "https://github.com" },
      /^param "serverURL"/,
    ],
    [
      "another scmType's default host: refused",
      { "scm-type": "github", ...OPERATOR },
      { scmType: "gitlab" },
      /^param "scmType": gitlab at https:\/\/gitlab\.com is not the forge/,
    ],
    [
      "the same server under another scmType's API: refused",
      { "scm-type": "gitea", "server-url": "https://forge.corp", ...OPERATOR },
      { scmType: "gitlab" },
      /^param "scmType"/,
    ],
    [
      "the request's own token goes wherever its binding allows",
      { "server-url": "https://ghe.corp", ...OPERATOR },
      { serverURL: "https://other.example", token: "mine", tokenKey: "k" },
      { kind: "request", secret: "mine", key: "k" },
    ],
    [
      "no operator token: anonymous, any server",
      {},
      { serverURL: "https://other.example" },
      { kind: "anonymous" },
    ],
  ];
  for (const [name, config, params, want] of cases) {
    const got = choose(config, params);
    if (want instanceof RegExp) {
      assert.equal(got.kind, "refuse", name);
      assert.match((got as { message: string }).message, want, name);
    } else assert.deepEqual(got, want, name);
  }
});
