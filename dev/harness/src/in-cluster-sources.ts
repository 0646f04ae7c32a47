// The sources the in-cluster suite resolves from, in both modes (e2e/in-cluster/fleet.test.ts and
// all-in-one.test.ts): a git server, a registry with one bundle, a plain HTTP server serving
// /task.yaml and an Artifact Hub protocol fixture, all on the host's pod-network address (pods
// cannot reach the host's loopback); Tekton's hubresolver-config in Tekton's namespace naming the
// fixture; and one request of each type, as a tenant makes them.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { ResolutionRequest } from "@quarry/api";
import { applyObject } from "@quarry/devcluster/apply";
import { buildStandardRepo, type StandardRepo } from "@quarry/devcluster/git-repos";
import { type GitServer, startGitServer } from "@quarry/devcluster/git-server";
import { tektonLayer } from "@quarry/devcluster/oci-layout";
import { type Registry, startRegistry } from "@quarry/devcluster/registry";
import type { KubeClient } from "@quarry/kube";
import { pushLayout, taskYaml } from "./bundle-scenario.ts";
import { type HubFixture, startHubFixture } from "./hub-fixture.ts";
import { hubTask } from "./hub-scenario.ts";
import type { SharedNode } from "./node.ts";
import { newRequest } from "./scenario.ts";

/** Tekton's resolvers namespace, where the suite keeps Tekton's hubresolver-config. */
export const TEKTON_NS = "tekton-pipelines-resolvers";

const typeLabel = (type: string) => ({ "resolution.tekton.dev/type": type });

export interface InClusterSources {
  git: GitServer;
  repo: StandardRepo;
  registry: Registry;
  /** The Artifact Hub fixture (the hub resolver's artifact-hub-urls), with every request it heard. */
  hub: HubFixture;
  /** A git request for `path` at main, never served from the result cache. */
  gitRequest(namespace: string, name: string, path?: string): ResolutionRequest;
  /** The bundle's Task `hello`. */
  bundleRequest(namespace: string, name: string): ResolutionRequest;
  /** /task.yaml over plain HTTP (a Task named fetched-over-http). */
  httpRequest(namespace: string, name: string): ResolutionRequest;
  /** git-clone 0.9 from the hub fixture (its Task marked fetched-from-hub). */
  hubRequest(namespace: string, name: string): ResolutionRequest;
  /** The Task `local-task`, which the tests create in the tenant namespace. */
  clusterRequest(namespace: string, name: string): ResolutionRequest;
  /** The umbrella chart's values the sources need, in either mode. */
  values(): Record<string, Record<string, unknown>>;
  stop(): Promise<void>;
}

export async function startInClusterSources(node: SharedNode, admin: KubeClient): Promise<InClusterSources> {
  const git = await startGitServer({ address: node.hostAddress });
  const repo = await buildStandardRepo(git.root);
  const registry = await startRegistry({ address: node.hostAddress });
  const bundleRef = registry.ref("team/tasks:v1");
  const web: Server = createServer((req, res) => {
    if (req.url === "/task.yaml") return void res.end(taskYaml("fetched-over-http"));
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => web.listen(0, node.hostAddress, r));
  const webBase = `http://${node.hostAddress}:${(web.address() as AddressInfo).port}`;
  const hub = await startHubFixture({ address: node.hostAddress });
  hub.add({
    hub: "artifact",
    catalog: "tekton-catalog-tasks",
    kind: "task",
    name: "git-clone",
    versions: [{ version: "0.9.0", yaml: hubTask("git-clone", "fetched-from-hub") }],
  });
  await pushLayout(bundleRef, {
    layers: [tektonLayer({ kind: "task", name: "hello", content: taskYaml("hello") })],
  });
  // Tekton's hubresolver-config, read in place in Tekton's namespace (global.tektonConfigNamespace):
  // the hub URL the resolver uses comes from there, through the Role the chart renders
  await applyObject(admin, { apiVersion: "v1", kind: "Namespace", metadata: { name: TEKTON_NS } });
  await applyObject(admin, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "hubresolver-config", namespace: TEKTON_NS },
    data: {
      "default-tekton-hub-catalog": "Tekton",
      "default-artifact-hub-task-catalog": "tekton-catalog-tasks",
      "default-artifact-hub-pipeline-catalog": "tekton-catalog-pipelines",
      "default-kind": "task",
      "default-type": "artifact",
      "artifact-hub-urls": `- ${hub.base}`,
    },
  });
  return {
    git,
    repo,
    registry,
    hub,
    gitRequest: (namespace, name, path = "task.yaml") =>
      newRequest(namespace, name, typeLabel("git"), {
        url: git.url(repo.name),
        revision: "main",
        pathInRepo: path,
        // every request is resolved by a resolver, not served from its result cache
        cache: "never",
      }),
    bundleRequest: (namespace, name) =>
      newRequest(namespace, name, typeLabel("bundles"), { bundle: bundleRef, name: "hello", kind: "task" }),
    httpRequest: (namespace, name) =>
      newRequest(namespace, name, typeLabel("http"), { url: `${webBase}/task.yaml` }),
    hubRequest: (namespace, name) =>
      newRequest(namespace, name, typeLabel("hub"), { name: "git-clone", version: "0.9" }),
    clusterRequest: (namespace, name) =>
      newRequest(namespace, name, typeLabel("cluster"), { kind: "task", name: "local-task" }),
    values: () => ({
      "bundle-resolver": { config: { "insecure-registries": registry.host } },
      global: { tektonConfigNamespace: TEKTON_NS },
    }),
    stop: async () => {
      await git.stop();
      await registry.stop();
      web.closeAllConnections();
      web.close();
      await hub.close();
      repo.builder.dispose();
    },
  };
}
