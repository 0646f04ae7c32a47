// After the sweep (cases-credentials.ts): the capture servers, which a
// gitToken was asked to reach, saw no connection and so never the token; the
// Secret-error rows read one text once their own names are taken out, while
// the git resolver's log holds each specific reason.
import assert from "node:assert/strict";
import { test } from "node:test";
import { getRequest, succeeded } from "@quarry/harness/scenario";
import { ORACLE_ROWS } from "./cases-credentials.ts";
import { type HostileWorld, SECRETS } from "./fixture.ts";

export function credentialCaptureTest(world: () => HostileWorld): void {
  test("no gitToken reached a host it is not bound to, and Secret errors read the same", async () => {
    const { scn, credentials } = world();
    const basic = Buffer.from(`git:${SECRETS.gitToken}`).toString("base64");
    for (const capture of credentials.captures) {
      const auth = capture.requests.map((r) => r.authorization ?? "").join("\n");
      assert.ok(
        !auth.includes(SECRETS.gitToken) && !auth.includes(basic),
        `${capture.baseUrl} got the token`,
      );
      assert.deepEqual(capture.requests, [], `${capture.baseUrl} was asked`);
      assert.equal(capture.connections, 0, `${capture.baseUrl} was connected to`);
    }

    const texts = new Set<string>();
    for (const row of ORACLE_ROWS) {
      const message = succeeded(await getRequest(scn.admin, scn.namespace, row.name))?.message ?? "";
      const named = `${scn.namespace}/${row.secret} key "${row.key}"`;
      assert.ok(message.includes(named), `${row.name}: ${message}`);
      texts.add(message.replace(named, "<secret> key <key>"));
    }
    assert.equal(texts.size, 1, `the messages differ:\n${[...texts].join("\n")}`);

    const log = scn.services.find((s) => s.name === "git-resolver")?.logs() ?? "";
    for (const detail of [
      `Secret ${scn.namespace}/ghost-creds not found`,
      `Secret ${scn.namespace}/git-creds has no key \\"ghost-key\\"`,
      `key \\"token\\" of Secret ${scn.namespace}/empty-creds is empty`,
      `Secret ${scn.namespace}/git-creds is not bound to ${credentials.ctx.unboundUrl}`,
    ])
      assert.ok(log.includes(detail), `the git resolver's log lacks ${detail}`);
  });
}
