import assert from "node:assert/strict";
import { createServer, get, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { DEFAULT_BLOCKED_NETWORKS, parseBlockedNetworks } from "./blocked-networks.ts";
import { checkedLookup, checkTarget, resolveChecked } from "./checked-lookup.ts";
import { EgressError } from "./egress-error.ts";

// `localhost` resolves to 127.0.0.1 on the test machines (/etc/hosts), through the real resolver
const BLOCK_127_0_0_1 = parseBlockedNetworks("blocked-networks", "default, 127.0.0.1/32");

const blockedAddress = (host: string, address: string) => (err: unknown) =>
  err instanceof EgressError &&
  err.code === "blocked-address" &&
  err.message.includes(host) &&
  err.message.includes(address) &&
  err.message.includes("blocked-networks");

describe("resolveChecked", () => {
  test("a name resolving to a blocked address is refused, naming the host, the address and the key", async () => {
    await assert.rejects(resolveChecked("localhost", BLOCK_127_0_0_1), (err: unknown) => {
      assert.ok(blockedAddress("localhost", "127.0.0.1")(err), String(err));
      assert.equal(
        (err as Error).message,
        "refusing to connect to localhost: it resolves to 127.0.0.1, in 127.0.0.1/32, which blocked-networks blocks",
      );
      return true;
    });
  });

  test("the same name under the default list resolves, and the addresses come back", async () => {
    const got = await resolveChecked("localhost", DEFAULT_BLOCKED_NETWORKS);
    assert.deepEqual(
      got.map((a) => a.address),
      ["127.0.0.1"],
    );
  });

  test("literal addresses are checked as written: IPv4, IPv4-mapped IPv6, bracketed", async () => {
    await assert.rejects(
      resolveChecked("127.0.0.1", BLOCK_127_0_0_1),
      blockedAddress("127.0.0.1", "127.0.0.1"),
    );
    await assert.rejects(
      resolveChecked("[::ffff:127.0.0.1]", BLOCK_127_0_0_1),
      blockedAddress("[::ffff:127.0.0.1]", "::ffff:127.0.0.1"),
    );
    await assert.rejects(
      resolveChecked("[::ffff:a9fe:a9fe]", DEFAULT_BLOCKED_NETWORKS),
      blockedAddress("[::ffff:a9fe:a9fe]", "169.254.0.0/16"),
    );
    assert.deepEqual(await resolveChecked("127.0.0.2", BLOCK_127_0_0_1), [
      { address: "127.0.0.2", family: 4 },
    ]);
    assert.deepEqual(await resolveChecked("[::1]", BLOCK_127_0_0_1), [{ address: "::1", family: 6 }]);
  });

  test("one blocked address among several refuses the name", async () => {
    const twoFaced = async () => [
      { address: "127.0.0.2", family: 4 },
      { address: "::ffff:127.0.0.1", family: 6 },
    ];
    await assert.rejects(
      resolveChecked("rebind.example", BLOCK_127_0_0_1, twoFaced),
      blockedAddress("rebind.example", "::ffff:127.0.0.1"),
    );
  });

  test("a name that does not resolve is a plain DNS error (retried), not a refusal", async () => {
    await assert.rejects(
      resolveChecked("nothing-here.invalid", BLOCK_127_0_0_1),
      (err: unknown) => !(err instanceof EgressError),
    );
  });
});

describe("checkTarget (before a request)", () => {
  test("through a proxy the target's name is resolved here and refused when blocked", async () => {
    await assert.rejects(
      checkTarget(new URL("http://localhost:1/x"), true, BLOCK_127_0_0_1),
      blockedAddress("localhost", "127.0.0.1"),
    );
    // a name the resolver cannot resolve is left to the proxy
    await checkTarget(new URL("https://nothing-here.invalid/x"), true, BLOCK_127_0_0_1);
  });

  test("direct, a literal address is checked now and a name is left to the connect", async () => {
    await assert.rejects(
      checkTarget(new URL("http://127.0.0.1:1/"), false, BLOCK_127_0_0_1),
      blockedAddress("127.0.0.1", "127.0.0.1"),
    );
    await checkTarget(new URL("http://localhost:1/"), false, BLOCK_127_0_0_1);
  });
});

describe("checkedLookup in a node http Agent against a real server on 127.0.0.1", () => {
  let server: Server;
  let port = 0;
  let connections = 0;
  before(async () => {
    server = createServer((_req, res) => res.end("ok"));
    server.on("connection", () => connections++);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const fetchVia = (lookup: ReturnType<typeof checkedLookup>) =>
    new Promise<string>((resolve, reject) => {
      get(`http://localhost:${port}/`, { lookup }, (res) => {
        let body = "";
        res.on("data", (c: Buffer) => {
          body += c.toString();
        });
        res.on("end", () => resolve(body));
      }).on("error", reject);
    });

  test("blocked: the socket fails with the EgressError and the server sees no connection", async () => {
    const before = connections;
    await assert.rejects(fetchVia(checkedLookup(BLOCK_127_0_0_1)), blockedAddress("localhost", "127.0.0.1"));
    assert.equal(connections, before);
  });

  test("allowed: the connection goes to the checked address", async () => {
    const before = connections;
    assert.equal(await fetchVia(checkedLookup(DEFAULT_BLOCKED_NETWORKS)), "ok");
    assert.equal(connections, before + 1);
  });
});
