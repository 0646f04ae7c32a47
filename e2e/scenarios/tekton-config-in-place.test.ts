// A migration copies no ConfigMap: with the chart's tektonConfigNamespace, the
// git resolver reads Tekton's git-resolver-config and resolver-cache-config
// where Tekton keeps them (here as Tekton v1.15 ships them, pointed at the
// fixture server), through the Role the chart renders there, and nothing else
// in that namespace. Tekton's keys win over the resolver's own ConfigMap; an
// edit of Tekton's ConfigMap is seen live; a key Quarry does not implement
// gets a Warning Event on Tekton's ConfigMap, in Tekton's namespace.
import assert from "node:assert/strict";
import { test } from "node:test";
import { applyObject } from "@quarry/devcluster/apply";
import { TASK_V1, TASK_V2 } from "@quarry/devcluster/git-repos";
import { waitUntil } from "@quarry/devcluster/wait";
import { GIT_LABELS, useGitScenario } from "@quarry/harness/git-scenario";
import { template } from "@quarry/harness/helm";
import { createRequest, dataOf, newRequest, resolvedOk, waitForRequest } from "@quarry/harness/scenario";
import { configMaps, isApiError } from "@quarry/kube";

/** Tekton's namespace for this test (made in setup). */
let tektonNs = "";
/** The resolver's env as the chart renders it for tektonConfigNamespace. */
let chartEnv: Record<string, string> = {};

const git = useGitScenario("tekton-cfg", {
  // the resolver's own ConfigMap: Tekton's keys below win over these
  config: { "default-url": "http://127.0.0.1:1/not-used.git", "default-revision": "main" },
  setup: async ({ scn, url }) => {
    tektonNs = await scn.extraNamespace("tekton-resolvers");
    const cm = (name: string, data: Record<string, string>) =>
      applyObject(scn.admin, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, namespace: tektonNs },
        data,
      });
    // Tekton v1.15's git-resolver-config as shipped, its defaults pointed at the fixture's repository
    await cm("git-resolver-config", {
      "fetch-timeout": "1m",
      "default-url": url,
      "default-revision": "v1",
      "scm-type": "github",
      "server-url": "",
      "api-token-secret-name": "",
      "api-token-secret-key": "",
      "api-token-secret-namespace": "default",
      "default-org": "",
      // read by Tekton's git resolver, not implemented by Quarry's
      "git-token": "unused",
    });
    await cm("resolver-cache-config", { "max-size": "1000", ttl: "5m", "max-entries": "10" });
    await cm("resolvers-feature-flags", { "enable-git-resolver": "true" });
    const docs = template("git-resolver", [`--set=tektonConfigNamespace=${tektonNs}`], scn.namespace);
    for (const d of docs.filter((d) => d.metadata.name === "quarry-git-resolver-tekton-config"))
      await applyObject(scn.admin, d);
    const container = (
      docs.find((d) => d.kind === "Deployment")!.spec as {
        template: { spec: { containers: { env: { name: string; value?: string }[] }[] } };
      }
    ).template.spec.containers[0]!;
    chartEnv = Object.fromEntries(
      container.env
        .filter((e) => e.name.startsWith("QUARRY_TEKTON_") && e.value !== undefined)
        .map((e) => [e.name, e.value!]),
    );
  },
  env: () => chartEnv,
});

interface EventItem {
  reason: string;
  message: string;
  involvedObject: { kind: string; name: string; namespace: string };
}

async function tektonWarning(reason: string, configMap: string): Promise<EventItem> {
  const { scn } = git();
  return waitUntil(`${reason} on ${tektonNs}/${configMap}`, async () => {
    const list = await scn.admin.request<{ items: EventItem[] }>(
      "GET",
      `/api/v1/namespaces/${tektonNs}/events`,
    );
    return list.items.find((e) => e.reason === reason && e.involvedObject.name === configMap);
  });
}

async function resolve(name: string, params: Record<string, string>) {
  const { scn } = git();
  await createRequest(scn.admin, newRequest(scn.namespace, name, GIT_LABELS, params));
  return waitForRequest(scn, name, resolvedOk);
}

test("the chart's env names Tekton's namespace and its resolver-cache-config", () => {
  assert.deepEqual(chartEnv, {
    QUARRY_TEKTON_CONFIG_NAMESPACE: tektonNs,
    QUARRY_TEKTON_CACHE_CONFIG: `${tektonNs}/resolver-cache-config`,
  });
});

test("a request naming only the path resolves with Tekton's default-url and default-revision", async () => {
  const { repo, url } = git();
  const rr = await resolve("defaults", { pathInRepo: "task.yaml" });
  assert.equal(dataOf(rr), TASK_V1);
  assert.equal(rr.status?.annotations?.["resolution.tekton.dev/url"], url);
  assert.equal(rr.status?.annotations?.["resolution.tekton.dev/revision"], repo.first);
});

test("an edit of Tekton's ConfigMap in place is seen live", async () => {
  const { scn, repo } = git();
  await scn.admin.mergePatch(configMaps, tektonNs, "git-resolver-config", {
    data: { "default-revision": "main" },
  });
  const rr = await waitUntil("a request resolved at Tekton's new default-revision", async () => {
    const name = `edited-${Date.now()}`;
    const done = await resolve(name, { pathInRepo: "task.yaml" });
    return done.status?.annotations?.["resolution.tekton.dev/revision"] === repo.main && done;
  });
  assert.equal(dataOf(rr), TASK_V2);
});

test("a key of Tekton's that Quarry does not implement: a Warning Event on Tekton's ConfigMap, in its namespace", async () => {
  const event = await tektonWarning("UnsupportedConfigKey", "git-resolver-config");
  assert.equal(event.involvedObject.namespace, tektonNs);
  assert.match(event.message, new RegExp(`^ConfigMap ${tektonNs}/git-resolver-config .*key "git-token"`));
});

test("resolver-cache-config is read through its Role: its unknown key is reported on it", async () => {
  const event = await tektonWarning("UnknownConfigKey", "resolver-cache-config");
  assert.match(event.message, /key "max-entries"/);
});

test("the Role reads only those ConfigMaps in Tekton's namespace", async () => {
  const { scn } = git();
  const client = (await scn.identity("git-resolver")).client;
  await client.get(configMaps, tektonNs, "git-resolver-config");
  await client.get(configMaps, tektonNs, "resolver-cache-config");
  await assert.rejects(client.get(configMaps, tektonNs, "resolvers-feature-flags"), (e) =>
    isApiError(e, 403),
  );
  await assert.rejects(client.list(configMaps, tektonNs), (e) => isApiError(e, 403));
});
