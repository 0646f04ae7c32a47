import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ConfigError } from "@quarry/kube";
import { DEFAULT_BLOCKED_NETWORKS, parseBlockedNetworks } from "./blocked-networks.ts";
import { parseEgress } from "./egress.ts";

const KEY = "blocked-networks";

describe("blocked-networks: the default (unset or empty)", () => {
  const cases: [string, string | undefined][] = [
    ["169.254.169.254", "169.254.0.0/16"],
    ["169.254.0.1", "169.254.0.0/16"],
    ["fe80::1", "fe80::/10"],
    ["[fe80::a9fe:a9fe]", "fe80::/10"],
    ["fe80::1%eth0", "fe80::/10"],
    ["fd00:ec2::254", "fd00:ec2::254/128"],
    ["100.100.100.200", "100.100.100.200/32"],
    ["::ffff:169.254.169.254", "169.254.0.0/16"],
    ["::ffff:a9fe:a9fe", "169.254.0.0/16"],
    ["64:ff9b::169.254.169.254", "169.254.0.0/16"],
    ["127.0.0.1", undefined],
    ["::1", undefined],
    ["10.0.0.5", undefined],
    ["100.100.100.201", undefined],
    ["fd00:ec2::253", undefined],
    ["169.255.0.1", undefined],
    ["not-an-address", undefined],
  ];
  for (const [address, want] of cases) {
    test(`${address} → ${want ?? "allowed"}`, () => {
      assert.equal(DEFAULT_BLOCKED_NETWORKS.blocking(address), want);
      assert.equal(parseBlockedNetworks(KEY, undefined).blocking(address), want);
      assert.equal(parseBlockedNetworks(KEY, "  \n").blocking(address), want);
    });
  }
});

describe("blocked-networks: named sets, CIDRs and addresses", () => {
  const list = parseBlockedNetworks(
    KEY,
    "default, private\nloopback # this host too\n198.51.100.7 2001:db8::/32 ::ffff:203.0.113.0/120",
  );
  const cases: [string, string | undefined][] = [
    ["169.254.169.254", "169.254.0.0/16"],
    ["10.96.0.1", "10.0.0.0/8"],
    ["172.31.255.255", "172.16.0.0/12"],
    ["172.32.0.1", undefined],
    ["192.168.1.1", "192.168.0.0/16"],
    ["100.64.0.1", "100.64.0.0/10"],
    ["fd12::1", "fc00::/7"],
    ["127.0.0.1", "127.0.0.0/8"],
    ["127.0.0.3", "127.0.0.0/8"],
    ["::ffff:127.0.0.1", "127.0.0.0/8"],
    ["::1", "::1/128"],
    ["0.0.0.0", "0.0.0.0/8"],
    ["::", "::/128"],
    ["198.51.100.7", "198.51.100.7"],
    ["198.51.100.8", undefined],
    ["2001:db8:1::5", "2001:db8::/32"],
    ["203.0.113.9", "::ffff:203.0.113.0/120"],
    ["8.8.8.8", undefined],
    ["2606:4700::1", undefined],
  ];
  for (const [address, want] of cases) {
    test(`${address} → ${want ?? "allowed"}`, () => assert.equal(list.blocking(address), want));
  }

  test("the service CIDR beside the defaults, as the docs write it", () => {
    const svc = parseBlockedNetworks(KEY, "default,private,loopback,10.96.0.0/12");
    assert.equal(svc.blocking("10.96.0.10"), "10.0.0.0/8");
    const only = parseBlockedNetworks(KEY, "default, 10.96.0.0/12");
    assert.equal(only.blocking("10.96.0.10"), "10.96.0.0/12");
    assert.equal(only.blocking("10.112.0.1"), undefined);
    assert.equal(only.blocking("127.0.0.1"), undefined);
  });

  test("a single loopback address beside the defaults (the hostile e2e world's list)", () => {
    const one = parseBlockedNetworks(KEY, "default,127.0.0.1/32");
    assert.equal(one.blocking("127.0.0.1"), "127.0.0.1/32");
    assert.equal(one.blocking("::ffff:7f00:1"), "127.0.0.1/32");
    assert.equal(one.blocking("127.0.0.2"), undefined);
  });

  test('"none" alone blocks nothing, not even link-local', () => {
    const none = parseBlockedNetworks(KEY, "none");
    assert.equal(none.empty, true);
    assert.equal(none.blocking("169.254.169.254"), undefined);
  });

  test("the defaults written out by hand count as keeping them", () => {
    const spelled = parseBlockedNetworks(
      KEY,
      "169.254.0.0/16, fe80::/10, fd00:ec2::254, 100.100.100.200, 10.96.0.0/12",
    );
    assert.equal(spelled.blocking("10.96.0.1"), "10.96.0.0/12");
  });
});

describe("blocked-networks: refused values name the key", () => {
  const bad: [string, string, RegExp][] = [
    [
      "a host name",
      "default, metadata.example",
      /"metadata\.example" is not an address, a CIDR or a named set/,
    ],
    ["a prefix too long", "default, 10.0.0.0/33", /"10\.0\.0\.0\/33" has a prefix length outside 0-32/],
    ["a v6 prefix too long", "default, fd00::/129", /outside 0-128/],
    ["a prefix that is not a number", "default, 10.0.0.0/x", /prefix length/],
    ["an unknown set", "default, corporate", /"corporate" is not .* the sets default/],
    [
      "a list that drops the defaults",
      "10.96.0.0/12",
      /leaves link-local or cloud metadata addresses open .*add "default"/,
    ],
    ["a list that drops the IPv6 metadata address", "link-local, 100.100.100.200", /add "default"/],
    ["none with more", "none, 10.0.0.0/8", /"none" blocks nothing and must be the only entry/],
  ];
  for (const [name, value, re] of bad) {
    test(`refuses ${name}`, () => {
      assert.throws(
        () => parseBlockedNetworks(KEY, value),
        (err: unknown) =>
          err instanceof ConfigError && err.message.startsWith(`${KEY}: `) && re.test(err.message),
      );
    });
  }
});

test("parseEgress reads blocked-networks, only without the configKey prefix", () => {
  const got = parseEgress({ "blocked-networks": "default,loopback" });
  assert.equal(got.blockedNetworks?.blocking("127.0.0.1"), "127.0.0.0/8");
  assert.equal(parseEgress({ "team.blocked-networks": "none" }, "team.").blockedNetworks, undefined);
  assert.equal(parseEgress({}).blockedNetworks, undefined);
  assert.throws(() => parseEgress({ "blocked-networks": "bogus" }), /^ConfigError|blocked-networks: /);
});
