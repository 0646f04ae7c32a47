// libs/oci's RegistryClient against the real registry (CNCF distribution) and
// real pushes: tag → digest with one HEAD, manifests and blobs verified
// against their digests, Basic and Bearer auth, and a registry that serves
// bytes that do not match their digest.
import assert from "node:assert/strict";
import { test } from "node:test";
import { craneBlob, DEFAULT_USER, tknBundlePush, useRegistry } from "@quarry/devcluster/registry";
import { TASK_YAML } from "@quarry/harness/bundle-scenario";
import { type ImageManifest, MediaType, parseReference, RegistryClient, RegistryError } from "@quarry/oci";

const open = useRegistry();
const basic = useRegistry({ auth: "htpasswd" });
const token = useRegistry({ auth: "token" });

/** A client that may send credentials to the registry's token server (another port of 127.0.0.1). */
function clientFor(registry: ReturnType<typeof open>): RegistryClient {
  const realm = registry.token
    ? [{ registry: registry.host, realm: new URL(registry.token.realm).host }]
    : [];
  return new RegistryClient({ tokenRealmHosts: () => realm });
}

async function pushAndRead(registry: ReturnType<typeof open>, creds = DEFAULT_USER) {
  const ref = registry.ref("team/task:v1");
  const { digest } = await tknBundlePush(ref, [TASK_YAML], registry.auth === "none" ? undefined : creds);
  const client = clientFor(registry);
  const repo = parseReference(ref);
  const credential = registry.auth === "none" ? undefined : creds;
  registry.clearLog();
  const head = await client.resolve(repo, "v1", { credential });
  const fetched = await client.getManifest(repo, head.digest, { credential });
  const manifest = fetched.manifest as ImageManifest;
  const layer = manifest.layers[0];
  assert.ok(layer);
  const blob = await client.getBlob(repo, layer, { credential });
  return { digest, head, fetched, manifest, layer, blob, client, repo, ref };
}

test("tag → digest with a HEAD, then the manifest and blob by digest, bytes as crane reads them", async () => {
  const { digest, head, fetched, manifest, layer, blob, ref } = await pushAndRead(open());
  assert.equal(head.digest, digest);
  assert.equal(fetched.descriptor.digest, digest);
  assert.equal(manifest.mediaType, MediaType.DockerManifest);
  assert.equal(layer.annotations?.["dev.tekton.image.name"], "build");
  assert.deepEqual(blob, await craneBlob(`${ref.split(":v1")[0]}@${layer.digest}`));
  const methods = open()
    .accessLog()
    .filter((e) => e.path.includes("/manifests/"))
    .map((e) => e.method);
  assert.deepEqual(methods, ["HEAD", "GET"]);
});

test("Basic auth (htpasswd) and Bearer auth (token realm) with the same credentials", async () => {
  for (const registry of [basic(), token()]) {
    const { head, digest, blob, layer } = await pushAndRead(registry);
    assert.equal(head.digest, digest, registry.auth);
    assert.equal(blob.length, layer.size);
  }
  const { repo } = await pushAndRead(token());
  await assert.rejects(
    clientFor(token()).resolve(repo, "v1", {
      credential: { username: DEFAULT_USER.username, password: "wrong" },
    }),
    (e: unknown) => e instanceof RegistryError && e.code === "unauthorized",
  );
});

test("a stored blob whose bytes were changed is refused as a digest mismatch", async () => {
  const registry = open();
  const { layer, repo } = await pushAndRead(registry);
  registry.corruptBlob(layer.digest);
  await assert.rejects(
    new RegistryClient().getBlob(repo, layer),
    (e: unknown) =>
      e instanceof RegistryError && e.code === "digest-mismatch" && e.message.includes(layer.digest),
  );
});
