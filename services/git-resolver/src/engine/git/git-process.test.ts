import assert from "node:assert/strict";
import { test } from "node:test";
import { classifyGitFailure, remoteEnv } from "./git-process.ts";

test("classifyGitFailure: trust and proxy refusals as git 2.39 (curl, GnuTLS and OpenSSL builds) prints them", () => {
  const cases: [string, ReturnType<typeof classifyGitFailure>][] = [
    [
      "fatal: unable to access 'https://192.0.2.2:18443/x.git/': server certificate verification failed. CAfile: /etc/ssl/certs/ca-certificates.crt CRLfile: none",
      "tls",
    ],
    [
      "fatal: unable to access 'https://h/x.git/': SSL certificate problem: unable to get local issuer certificate",
      "tls",
    ],
    ["fatal: unable to access 'https://h/x.git/': CONNECT tunnel failed, response 403", "proxy-refused"],
    [
      "fatal: unable to access 'https://h/x.git/': Received HTTP code 407 from proxy after CONNECT",
      "proxy-refused",
    ],
    [
      "fatal: unable to access 'https://h/x.git/': Failed to connect to 127.0.0.1 port 18887 after 0 ms: Couldn't connect to server",
      "unavailable",
    ],
    ["fatal: repository 'https://h/x.git/' not found", "repo-not-found"],
  ];
  for (const [stderr, want] of cases) assert.equal(classifyGitFailure(stderr), want, stderr);
});

test("remoteEnv: the proxy only when one applies, the CA file for the server and an https proxy", () => {
  const direct = remoteEnv("https://h/x.git", {});
  assert.equal(direct.https_proxy, undefined);
  assert.equal(direct.GIT_SSL_CAINFO, undefined);
  const via = remoteEnv("https://h/x.git", { proxy: "http://p:3128", caFile: "/tmp/ca.pem" });
  assert.equal(via.https_proxy, "http://p:3128");
  assert.equal(via.HTTPS_PROXY, "http://p:3128");
  assert.equal(via.GIT_SSL_CAINFO, "/tmp/ca.pem");
  assert.equal(via.GIT_PROXY_SSL_CAINFO, "/tmp/ca.pem");
});

test("remoteEnv: git follows no redirect, and is pinned to the checked addresses when given", () => {
  const config = (env: Record<string, string>) =>
    Object.fromEntries(
      Array.from({ length: Number(env.GIT_CONFIG_COUNT) }, (_, i) => [
        env[`GIT_CONFIG_KEY_${i}`],
        env[`GIT_CONFIG_VALUE_${i}`],
      ]),
    );
  assert.deepEqual(config(remoteEnv("https://h/x.git", {})), { "http.followRedirects": "false" });
  assert.deepEqual(
    config(
      remoteEnv("https://h/x.git", {
        resolve: "h:443:192.0.2.7,[2001:db8::7]",
        auth: { username: "git", token: "t" },
      }),
    ),
    {
      "http.followRedirects": "false",
      "http.curloptResolve": "h:443:192.0.2.7,[2001:db8::7]",
      "http.https://h/x.git.extraHeader": `Authorization: Basic ${Buffer.from("git:t").toString("base64")}`,
    },
  );
});
