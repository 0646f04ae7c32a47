import assert from "node:assert/strict";
import { test } from "node:test";
import { metadataHostProblem } from "./metadata-hosts.ts";

/** The hostname the WHATWG URL parser gives, as resolvers see it. */
const hostOf = (url: string) => new URL(url).hostname;

test("metadataHostProblem: link-local and metadata names, however spelled, are refused", () => {
  const refused = [
    "http://169.254.169.254/latest/meta-data/",
    "http://169.254.0.1/x.git",
    "http://2852039166/x.git", // 169.254.169.254 as one decimal number
    "http://0xa9.0xfe.0xa9.0xfe/x.git", // hex octets
    "http://0251.0376.0251.0376/x.git", // octal octets
    "http://[::ffff:169.254.169.254]/x.git", // IPv4-mapped IPv6
    "http://[fe80::1]/x.git",
    "http://[FE80::abcd]/x.git",
    "http://[fd00:ec2::254]/latest",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://METADATA.GOOGLE.INTERNAL./x",
    "http://metadata/x",
  ];
  for (const url of refused)
    assert.match(metadataHostProblem(hostOf(url)) ?? "", /resolvers never fetch/, url);
});

test("metadataHostProblem: loopback, private and public hosts are left to the allow-lists", () => {
  for (const url of [
    "http://127.0.0.1:8080/x.git",
    "http://[::1]/x.git",
    "http://10.0.0.5/x.git",
    "http://169.255.0.1/x.git",
    "https://github.com/tektoncd/catalog.git",
    "https://metadata.example.com/x.git",
  ])
    assert.equal(metadataHostProblem(hostOf(url)), undefined, url);
});
