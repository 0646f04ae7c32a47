// Tekton Pipelines' own controller (v1.15.1) with `taskRef.resolver: git` in API mode (`org` +
// `repo`), answered by Quarry's git resolver from a real Gitea on loopback, through the operator's
// token named in git-resolver-config (scm-type gitea, server-url, api-token-secret-*). Tekton's
// resolvers Deployment is at zero replicas, and each case asserts from the apiserver's audit log
// that only Quarry's processes wrote the requests' status.
//
// What Tekton's git resolver would have answered in API mode is computed as it computes it
// (pkg/resolution/resolver/git, ResolveAPIGit): the file's bytes as data, refSource
// {uri: "git+" + the repository's clone URL, digest: {sha1: the commit the revision names},
// entryPoint: the file's path}, and the annotations url, revision, path, org and repo.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { type Gitea, type GiteaRepo, startGitea } from "@quarry/devcluster/gitea";
import { createTokenSecret, grantTokenAccess } from "@quarry/harness/git-scenario";
import { setConfig } from "@quarry/harness/scenario";
import {
  createRun,
  expectResolvedAsTekton,
  params,
  type TektonCluster,
  taskRuns,
  useTektonCluster,
} from "@quarry/harness/tekton";

const task = (build: string) => `apiVersion: tekton.dev/v1
kind: Task
metadata:
  name: from-gitea
spec:
  params:
    - name: target
      type: string
      default: all
  steps:
    - name: build
      image: busybox
      script: echo ${build}
`;
const V1 = task("build v1");
const V2 = task("build v2");
const PATH = "tasks/build.yaml";

let gitea: Gitea | undefined;
let repo: GiteaRepo | undefined;
let first = "";
let second = "";
const cluster = useTektonCluster("tekton-git-api", {
  gitFiles: { "README.md": "unused\n" },
  auditLog: true,
  setup: async ({ scn }) => {
    gitea = await startGitea();
    // private: only the operator's token can read it
    repo = await gitea.createRepo("tasks", { private: true });
    first = (await gitea.writeFile(repo, PATH, V1)).commit;
    second = (await gitea.writeFile(repo, PATH, V2)).commit;
    // the operator's token Secret, in the scenario's namespace (the resolver reads it there)
    await grantTokenAccess(scn);
    await createTokenSecret(scn, "api-token", { token: gitea.admin.token });
    await setConfig(scn, "git-resolver-config", {
      "scm-type": "gitea",
      "server-url": gitea.baseUrl,
      "api-token-secret-name": "api-token",
      "api-token-secret-key": "token",
      "api-token-secret-namespace": scn.namespace,
      // Gitea is plain http on loopback: the token may go there only when it is listed
      "insecure-hosts": new URL(gitea.baseUrl).host,
    });
  },
  services: { "lifecycle-controller": {}, "git-resolver": {} },
});
after(() => gitea?.stop());

/** Tekton's git resolver's answer in API mode for the file at `commit`. */
const tektonAnswer = (data: string, commit: string) => ({
  type: "git",
  service: "git-resolver",
  data,
  refSource: { uri: `git+${repo!.cloneUrl}`, digest: { sha1: commit }, entryPoint: PATH },
});

const apiRef = (revision: string) => ({
  taskRef: {
    resolver: "git",
    params: params({ org: repo!.owner, repo: repo!.name, revision, pathInRepo: PATH }),
  },
});

test("TaskRuns through git API mode, by branch and by commit, carry what Tekton's resolver would", async () => {
  const t: TektonCluster = cluster();
  await createRun(t, taskRuns, "git-api-branch", apiRef(repo!.defaultBranch));
  await createRun(t, taskRuns, "git-api-commit", apiRef(first));
  const cases: [string, string, string][] = [
    ["git-api-branch", V2, second],
    ["git-api-commit", V1, first],
  ];
  for (const [name, data, commit] of cases) {
    const { request } = await expectResolvedAsTekton(t, taskRuns, name, tektonAnswer(data, commit));
    const a = request.status?.annotations ?? {};
    // Tekton's annotations for API mode
    assert.equal(a["resolution.tekton.dev/url"], repo!.cloneUrl, name);
    assert.equal(a["resolution.tekton.dev/revision"], commit, name);
    assert.equal(a["resolution.tekton.dev/path"], PATH, name);
    assert.equal(a["resolution.tekton.dev/org"], repo!.owner, name);
    assert.equal(a["resolution.tekton.dev/repo"], repo!.name, name);
  }
});
