// git-resolver: files from git repositories. Wiring only.
import { ServiceRuntime } from "@quarry/kube";
import { runResolvers } from "@quarry/resolver-sdk";
import { wireGitResolver } from "./wiring.ts";

const runtime = new ServiceRuntime("git-resolver");
await runResolvers([await wireGitResolver(runtime)], { runtime });
