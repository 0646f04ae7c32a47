// The components QUARRY_COMPONENTS names, wired onto one runtime: one informer
// per resource and selector set, one set of HA buckets, one ops server. Every
// resolver joins one controller (wireResolvers), as runResolvers hosts several.
import { wireBundleResolver } from "@quarry/bundle-resolver/wiring";
import { wireClusterResolver } from "@quarry/cluster-resolver/wiring";
import { wireGitResolver } from "@quarry/git-resolver/wiring";
import { wireHttpResolver } from "@quarry/http-resolver/wiring";
import { wireHubResolver } from "@quarry/hub-resolver/wiring";
import type { ServiceRuntime } from "@quarry/kube";
import { wireLifecycleController } from "@quarry/lifecycle-controller/wiring";
import { wirePipeResolver } from "@quarry/pipe-resolver/wiring";
import { type HostedResolver, wireResolvers } from "@quarry/resolver-sdk";
import { wireRunController } from "@quarry/run-controller/wiring";
import type { Component } from "./components.ts";

type ResolverComponent = Exclude<Component, "lifecycle" | "run">;

const RESOLVERS: Record<
  ResolverComponent,
  (runtime: ServiceRuntime) => HostedResolver | Promise<HostedResolver>
> = {
  cluster: wireClusterResolver,
  git: wireGitResolver,
  bundle: wireBundleResolver,
  pipe: wirePipeResolver,
  http: wireHttpResolver,
  hub: wireHubResolver,
};

const isResolver = (c: Component): c is ResolverComponent => c in RESOLVERS;

export async function wireAllInOne(runtime: ServiceRuntime, components: readonly Component[]): Promise<void> {
  if (components.length === 0) throw new Error("all-in-one: no component to run");
  // The lifecycle and run controllers first: the git resolver's wiring raises the runtime's worker
  // count when QUARRY_CONCURRENCY is unset, which must size only the resolvers' controller.
  if (components.includes("lifecycle")) wireLifecycleController(runtime);
  if (components.includes("run")) await wireRunController(runtime);
  const hosted: HostedResolver[] = [];
  for (const c of components.filter(isResolver)) hosted.push(await RESOLVERS[c](runtime));
  if (hosted.length > 0) wireResolvers(runtime, hosted);
  runtime.log.info({ components }, "all-in-one components wired");
}
