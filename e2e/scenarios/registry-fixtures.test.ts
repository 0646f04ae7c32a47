// The OCI registry fixtures themselves, against the real tools: tkn writes the
// bundle format Tekton reads, crane pushes hand-made layouts byte for byte,
// the registry enforces htpasswd and token auth, logs its requests, serves
// corrupted blobs as stored and keeps its content across a restart.
// Needs no control plane: node --test e2e/scenarios/registry-fixtures.test.ts (also runs with the e2e suite).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { gunzipSync } from "node:zlib";
import {
  type Creds,
  craneBlob,
  craneDigest,
  craneManifest,
  cranePush,
  DEFAULT_USER,
  DOCKER_LAYER_GZIP,
  DOCKER_MANIFEST,
  sha256Digest,
  TEKTON_API_VERSION,
  TEKTON_KIND,
  TEKTON_NAME,
  tektonLayer,
  tknBundlePush,
  useRegistry,
  writeOciLayout,
} from "@quarry/devcluster/registry";

const TASK = `apiVersion: tekton.dev/v1
kind: Task
metadata:
  name: build
spec:
  steps:
    - name: compile
      image: busybox
      script: echo build
`;

const PIPELINE = `apiVersion: tekton.dev/v1
kind: Pipeline
metadata:
  name: ci
spec:
  tasks:
    - name: build
      taskRef:
        name: build
`;

interface Layer {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}

const scratch = mkdtempSync(join(tmpdir(), "quarry-registry-fixture-test-"));
after(() => rmSync(scratch, { recursive: true, force: true }));
let layouts = 0;
const layoutDir = () => join(scratch, `layout-${++layouts}`);

/** First entry of a tar (gzip or not): its name and content. */
function firstTarEntry(blob: Buffer): { name: string; content: string } {
  const tar = blob[0] === 0x1f && blob[1] === 0x8b ? gunzipSync(blob) : blob;
  const name = tar.subarray(0, 100).toString("utf8").replace(/\0.*$/s, "");
  const size = Number.parseInt(tar.subarray(124, 136).toString("ascii").replace(/\0.*$/s, ""), 8);
  return { name, content: tar.subarray(512, 512 + size).toString("utf8") };
}

async function fetchWith(url: string, auth?: string): Promise<Response> {
  return fetch(url, {
    headers: {
      accept:
        "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json",
      ...(auth ? { authorization: auth } : {}),
    },
  });
}

const basic = (c: Creds) => `Basic ${Buffer.from(`${c.username}:${c.password}`).toString("base64")}`;

describe("registry without auth", () => {
  const registry = useRegistry();

  test("tkn bundle push writes one annotated layer per object", async (t) => {
    const r = registry();
    const ref = r.ref("team/bundle:v1");
    const { digest } = await tknBundlePush(ref, [TASK, PIPELINE]);
    assert.equal(await craneDigest(ref), digest);
    const { raw, manifest } = await craneManifest(ref);
    assert.equal(sha256Digest(Buffer.from(raw)), digest, "served manifest bytes match the digest");
    const layers = manifest.layers as Layer[];
    assert.equal(layers.length, 2);
    const byKind = new Map(layers.map((l) => [l.annotations?.[TEKTON_KIND], l]));
    assert.deepEqual(byKind.get("task")?.annotations, {
      [TEKTON_API_VERSION]: "v1",
      [TEKTON_KIND]: "task",
      [TEKTON_NAME]: "build",
    });
    assert.deepEqual(byKind.get("pipeline")?.annotations, {
      [TEKTON_API_VERSION]: "v1",
      [TEKTON_KIND]: "pipeline",
      [TEKTON_NAME]: "ci",
    });
    assert.equal(manifest.mediaType, DOCKER_MANIFEST);
    for (const l of layers) assert.equal(l.mediaType, DOCKER_LAYER_GZIP);
    const entry = firstTarEntry(await craneBlob(r.ref(`team/bundle@${byKind.get("task")!.digest}`)));
    assert.equal(entry.name, "build");
    assert.equal(JSON.parse(entry.content).kind, "Task", "tkn stores the object as JSON");
    t.diagnostic(`tkn manifest: ${raw}`);
    t.diagnostic(`task layer tar entry ${JSON.stringify(entry.name)}: ${entry.content}`);
  });

  test("crane pushes a hand-made layout byte for byte (multi-entry tar, odd kind, no annotations)", async () => {
    const r = registry();
    const layout = writeOciLayout(layoutDir(), {
      layers: [
        tektonLayer({ kind: "Task", name: "upper", content: TASK }),
        {
          entries: [
            { name: "a.yaml", content: TASK },
            { name: "b.yaml", content: PIPELINE },
          ],
        },
        { content: "not a tar at all", tar: false, annotations: { [TEKTON_KIND]: "task" } },
      ],
      annotations: { "org.example/owner": "e2e" },
    });
    const ref = r.ref("team/malformed:v1");
    assert.equal(await cranePush(layout.dir, ref), layout.manifestDigest);
    const { raw } = await craneManifest(ref);
    assert.equal(raw, layout.manifestBytes.toString("utf8"));
    const multi = await craneBlob(r.ref(`team/malformed@${layout.layers[1]!.digest}`));
    assert.deepEqual(multi, layout.layers[1]!.bytes);
    assert.equal(firstTarEntry(multi).name, "a.yaml");
  });

  test("a docker-style layout matches what tkn writes for the same object", async () => {
    const r = registry();
    const taskJson = JSON.stringify({
      apiVersion: "tekton.dev/v1",
      kind: "Task",
      metadata: { name: "build" },
    });
    const layout = writeOciLayout(layoutDir(), {
      style: "docker",
      layers: [tektonLayer({ kind: "task", name: "build", content: taskJson })],
    });
    await cranePush(layout.dir, r.ref("team/docker-style:v1"));
    const { manifest } = await craneManifest(r.ref("team/docker-style:v1"));
    assert.equal(manifest.mediaType, DOCKER_MANIFEST);
    assert.equal((manifest.layers as Layer[])[0]!.mediaType, DOCKER_LAYER_GZIP);
  });

  test("the access log counts blob GETs and clearLog starts afresh", async () => {
    const r = registry();
    const layout = writeOciLayout(layoutDir(), {
      layers: [tektonLayer({ kind: "task", name: "x", content: TASK })],
    });
    const ref = r.ref("team/logged:v1");
    await cranePush(layout.dir, ref);
    r.clearLog();
    const blob = layout.layers[0]!.digest;
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${r.url}/v2/team/logged/blobs/${blob}`);
      assert.equal(res.status, 200);
      await res.arrayBuffer();
    }
    await r.waitForAccess(() => r.blobGets(blob, "team/logged").length === 2);
    assert.equal(r.blobGets(blob, "team/logged").length, 2);
    assert.equal(r.blobGets(blob, "other/repo").length, 0);
    assert.equal(r.accessLog().length, 2, "only what came after clearLog");
  });

  test("corruptBlob: the registry serves same-length bytes whose sha256 is not the digest", async () => {
    const r = registry();
    const layout = writeOciLayout(layoutDir(), {
      layers: [tektonLayer({ kind: "task", name: "lie", content: TASK })],
    });
    await cranePush(layout.dir, r.ref("team/liar:v1"));
    const blob = layout.layers[0]!.digest;
    r.corruptBlob(blob);
    const res = await fetch(`${r.url}/v2/team/liar/blobs/${blob}`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("docker-content-digest"), blob, "the registry still claims the digest");
    const served = Buffer.from(await res.arrayBuffer());
    assert.equal(served.length, layout.layers[0]!.size);
    assert.notEqual(`sha256:${createHash("sha256").update(served).digest("hex")}`, blob);
  });

  test("stop closes the port, start brings the same content back on the same port", async () => {
    const r = registry();
    const { digest } = await tknBundlePush(r.ref("team/durable:v1"), [TASK]);
    await r.stop();
    await assert.rejects(fetch(`${r.url}/v2/`), /fetch failed/);
    await r.start();
    assert.equal(await craneDigest(r.ref("team/durable:v1")), digest);
  });
});

describe("registry with htpasswd auth", () => {
  const registry = useRegistry({ auth: "htpasswd" });

  test("anonymous requests get 401 Basic; the user gets in and can push", async () => {
    const r = registry();
    const anon = await fetchWith(`${r.url}/v2/`);
    assert.equal(anon.status, 401);
    assert.match(anon.headers.get("www-authenticate") ?? "", /^Basic realm=/);
    const wrong = await fetchWith(`${r.url}/v2/`, basic({ username: "tester", password: "nope" }));
    assert.equal(wrong.status, 401);
    assert.equal((await fetchWith(`${r.url}/v2/`, basic(DEFAULT_USER))).status, 200);

    const ref = r.ref("private/bundle:v1");
    await assert.rejects(tknBundlePush(ref, [TASK]), /401|UNAUTHORIZED|authentication required/i);
    const { digest } = await tknBundlePush(ref, [TASK], DEFAULT_USER);
    const manifest = await fetchWith(`${r.url}/v2/private/bundle/manifests/v1`, basic(DEFAULT_USER));
    assert.equal(manifest.status, 200);
    assert.equal(manifest.headers.get("docker-content-digest"), digest);
    await r.waitForAccess((e) => e.method === "PUT" && e.path === "/v2/private/bundle/manifests/v1");
  });
});

describe("registry with token auth", () => {
  const registry = useRegistry({ auth: "token" });

  test("a Bearer challenge names the realm; a token from it for the user pulls and pushes", async () => {
    const r = registry();
    const token = r.token!;
    const { digest } = await tknBundlePush(r.ref("team/tok:v1"), [TASK], DEFAULT_USER);
    assert.ok(token.issued() >= 1, "tkn fetched a token");
    // ggcr asks for push,pull in one scope when pushing.
    assert.ok(
      token
        .requests()
        .some((q) => q.user === "tester" && q.granted.includes("repository:team/tok:push,pull")),
    );

    const challenge = await fetchWith(`${r.url}/v2/team/tok/manifests/v1`);
    assert.equal(challenge.status, 401);
    const header = challenge.headers.get("www-authenticate") ?? "";
    assert.equal(
      header,
      `Bearer realm="${token.realm}",service="${token.service}",scope="repository:team/tok:pull"`,
    );

    token.clear();
    const url = `${token.realm}?service=${token.service}&scope=repository:team/tok:pull`;
    const granted = await fetch(url, { headers: { authorization: basic(DEFAULT_USER) } });
    assert.equal(granted.status, 200);
    const body = (await granted.json()) as { token: string; access_token: string; expires_in: number };
    assert.equal(body.access_token, body.token);
    assert.equal(body.expires_in, 300);
    const pulled = await fetchWith(`${r.url}/v2/team/tok/manifests/v1`, `Bearer ${body.token}`);
    assert.equal(pulled.status, 200);
    assert.equal(pulled.headers.get("docker-content-digest"), digest);
    assert.deepEqual(
      token.requests().map(({ at: _at, ...r }) => r),
      [
        {
          method: "GET",
          user: "tester",
          service: token.service,
          scopes: ["repository:team/tok:pull"],
          status: 200,
          granted: ["repository:team/tok:pull"],
        },
      ],
    );

    const bad = await fetch(url, {
      headers: { authorization: basic({ username: "tester", password: "x" }) },
    });
    assert.equal(bad.status, 401);
    const anon = (await (await fetch(url)).json()) as { token: string };
    const denied = await fetchWith(`${r.url}/v2/team/tok/manifests/v1`, `Bearer ${anon.token}`);
    assert.equal(denied.status, 401, "an anonymous token grants nothing without anonymousPull");
    assert.match(denied.headers.get("www-authenticate") ?? "", /error="insufficient_scope"/);
  });
});

describe("registry with token auth and anonymous pull", () => {
  const registry = useRegistry({ auth: "token", anonymousPull: true });

  test("an anonymous token pulls but cannot push", async () => {
    const r = registry();
    const { digest } = await tknBundlePush(r.ref("public/bundle:v1"), [TASK], DEFAULT_USER);
    assert.equal(await craneDigest(r.ref("public/bundle:v1")), digest, "crane pulls anonymously");
    assert.ok(r.token!.requests().some((q) => q.user === undefined && q.granted.length === 1));
    // go-containerregistry sometimes reports the refused PUT as its failed replay ("ContentLength=…
    // with Body length 0") instead of the 401; either way, what counts is that nothing was pushed
    await assert.rejects(
      tknBundlePush(r.ref("public/bundle:v2"), [TASK]),
      /401|UNAUTHORIZED|denied|with Body length 0/i,
    );
    await assert.rejects(craneDigest(r.ref("public/bundle:v2")), "v2 does not exist");
  });
});
