// The installed `quarry`: scripts/install-cli.sh builds the one-file bundle
// into a temporary PREFIX, and every command here runs that file on the
// machine's own Node (/usr/bin/node, 20 here; the repository's code needs 22+)
// against the e2e control plane: get (-A, -o json|yaml|name, -l, -w),
// describe taskrun (a TaskRun and the ResolutionRequest it owns), version and
// doctor (an opt-in RoleBinding a namespace lacks).
import assert from "node:assert/strict";
import { execFile, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import type { ResolutionRequest } from "@quarry/api";
import { applyObject } from "@quarry/devcluster/apply";
import { repoRoot } from "@quarry/devcluster/paths";
import { waitUntil } from "@quarry/devcluster/wait";
import {
  createRequest,
  newRequest,
  resolvedOk,
  taskManifest,
  useScenario,
  waitForRequest,
} from "@quarry/harness/scenario";
import { isApiError, type KubeClient, type KubeObject, type ResourceType } from "@quarry/kube";

const run = promisify(execFile);
const SYSTEM_NODE = "/usr/bin/node";
const cluster = { "resolution.tekton.dev/type": "cluster" };

const crds: ResourceType = {
  group: "apiextensions.k8s.io",
  version: "v1",
  plural: "customresourcedefinitions",
  kind: "CustomResourceDefinition",
  namespaced: false,
};
const taskRuns: ResourceType = {
  group: "tekton.dev",
  version: "v1",
  plural: "taskruns",
  kind: "TaskRun",
  namespaced: true,
};

/**
 * Tekton's TaskRun CRD, schemaless: created only when the cluster has none (a Tekton install
 * replaces it with its own); describe reads the run and what it owns, not Tekton's validation.
 */
async function ensureTaskRunCrd(admin: KubeClient): Promise<void> {
  try {
    await admin.create(crds, {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "taskruns.tekton.dev" },
      spec: {
        group: "tekton.dev",
        scope: "Namespaced",
        names: { plural: "taskruns", singular: "taskrun", kind: "TaskRun", listKind: "TaskRunList" },
        versions: [
          {
            name: "v1",
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
            subresources: { status: {} },
          },
        ],
      },
    } as KubeObject);
  } catch (e) {
    if (!isApiError(e, 409)) throw e;
  }
  await waitUntil("taskruns.tekton.dev served", async () => {
    try {
      await admin.list(taskRuns, "default");
      return true;
    } catch {
      return false;
    }
  });
}

const scenario = useScenario("cli-installed", {
  setup: async (scn) => {
    await applyObject(scn.admin, taskManifest(scn.namespace, "hello"));
    await ensureTaskRunCrd(scn.admin);
  },
  start: ["lifecycle-controller", "cluster-resolver"],
});

let prefix = "";
let bin = "";
before(() => {
  prefix = mkdtempSync(join(tmpdir(), "quarry-cli-"));
  execFileSync("bash", [join(repoRoot, "scripts", "install-cli.sh")], {
    env: { ...process.env, PREFIX: prefix, QUARRY_BIN_DIR: "" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  bin = join(prefix, "bin", "quarry");
});
after(() => rmSync(prefix, { recursive: true, force: true }));

/** The installed command on the machine's Node, with a PATH that has no other Node. */
function quarry(...args: string[]) {
  const scn = scenario();
  return run(SYSTEM_NODE, [bin, ...args, "--kubeconfig", scn.cp.adminKubeconfig], {
    timeout: 60_000,
    env: { PATH: "/usr/bin:/bin", HOME: process.env.HOME ?? "/root" },
  });
}

test("the installed file runs on the machine's Node 20 and prints its version", async () => {
  const version = execFileSync(SYSTEM_NODE, ["--version"], { encoding: "utf8" });
  assert.match(version, /^v20\./, "the machine's own Node is the one this proves the bundle on");
  const { stdout } = await run(SYSTEM_NODE, [bin, "--version"], { env: { PATH: "/usr/bin:/bin" } });
  assert.match(stdout, /^quarry \d+\.\d+\.\d+/);
  const help = await run(bin, ["--help"], { env: { PATH: "/usr/bin:/bin" } });
  assert.match(help.stdout, /quarry doctor/, "runs by its #! line too");
});

test("get -A, -o json, -o yaml, -o name and -l", async () => {
  const scn = scenario();
  await createRequest(
    scn.admin,
    newRequest(scn.namespace, "cli-a", cluster, { kind: "task", name: "hello" }),
  );
  await waitForRequest(scn, "cli-a", resolvedOk);

  const all = await quarry("get", "-A");
  assert.match(all.stdout, /^NAMESPACE\s+NAME\s+SUCCEEDED\s+REASON\s+RESOLVER\s+AGE/);
  assert.match(all.stdout, new RegExp(`${scn.namespace}\\s+cli-a\\s+True\\s+\\S*\\s+cluster`));

  const json = JSON.parse((await quarry("get", "-n", scn.namespace, "-o", "json")).stdout) as {
    kind: string;
    items: ResolutionRequest[];
  };
  assert.equal(json.kind, "List");
  const item = json.items.find((i) => i.metadata.name === "cli-a");
  assert.equal(item?.kind, "ResolutionRequest");
  assert.equal(item?.apiVersion, "resolution.tekton.dev/v1beta1");
  assert.equal(item?.status?.conditions?.find((c) => c.type === "Succeeded")?.status, "True");

  const one = await quarry("get", "requests", "cli-a", "-n", scn.namespace, "-o", "yaml");
  assert.match(one.stdout, /^apiVersion: resolution\.tekton\.dev\/v1beta1\nkind: ResolutionRequest\n/);

  const names = await quarry(
    "get",
    "-n",
    scn.namespace,
    "-o",
    "name",
    "-l",
    "resolution.tekton.dev/type=cluster",
  );
  assert.match(names.stdout, /^resolutionrequest\.resolution\.tekton\.dev\/cli-a$/m);
  const none = await quarry("get", "-n", scn.namespace, "-l", "resolution.tekton.dev/type=nothing");
  assert.match(none.stderr, /No resources found in .* namespace/);
});

test("describe taskrun follows the owner reference to its ResolutionRequest", async () => {
  const scn = scenario();
  const tr = await scn.admin.create<KubeObject>(taskRuns, {
    apiVersion: "tekton.dev/v1",
    kind: "TaskRun",
    metadata: { name: "build-1", namespace: scn.namespace },
    spec: {
      taskRef: {
        resolver: "cluster",
        params: [
          { name: "kind", value: "task" },
          { name: "name", value: "hello" },
        ],
      },
    },
  } as KubeObject);
  const rr = newRequest(scn.namespace, "build-1-rr", cluster, { kind: "task", name: "hello" });
  rr.metadata.ownerReferences = [
    {
      apiVersion: "tekton.dev/v1",
      kind: "TaskRun",
      name: "build-1",
      uid: tr.metadata.uid!,
      controller: true,
    },
  ];
  await createRequest(scn.admin, rr);
  await waitForRequest(scn, "build-1-rr", resolvedOk);

  const { stdout } = await quarry("describe", "taskrun", "build-1", "-n", scn.namespace);
  assert.match(stdout, /^Name:\s+build-1$/m);
  assert.match(stdout, /^Kind:\s+TaskRun \(tekton\.dev\/v1\)$/m);
  assert.match(stdout, /^\s+Resolver:\s+cluster$/m);
  assert.match(stdout, /^Resolution Requests:$/m);
  assert.match(stdout, /TaskRun\/build-1\s+build-1-rr\s+cluster\s+True/);
  assert.match(stdout, /← ResolutionRequest build-1-rr succeeded/);

  await assert.rejects(
    quarry("describe", "taskrun", "absent", "-n", scn.namespace),
    (e: { code?: number; stderr?: string }) => {
      assert.equal(e.code, 1);
      assert.match(e.stderr ?? "", /NotFound/);
      return true;
    },
  );
});

test("get -w prints the listing, then each change, until interrupted", async () => {
  const scn = scenario();
  const child = spawn(
    SYSTEM_NODE,
    [bin, "get", "-w", "-n", scn.namespace, "--kubeconfig", scn.cp.adminKubeconfig],
    {
      env: { PATH: "/usr/bin:/bin" },
    },
  );
  let output = "";
  child.stdout.on("data", (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  try {
    await waitUntil("the listing", async () => /^NAME\s+SUCCEEDED/m.test(output));
    await createRequest(
      scn.admin,
      newRequest(scn.namespace, "cli-w", cluster, { kind: "task", name: "hello" }),
    );
    await waitUntil("the watched request resolved", async () => /^cli-w\s+True/m.test(output), {
      timeoutMs: 30_000,
    });
  } finally {
    child.kill("SIGINT");
  }
  assert.equal(await exited, 130, "interrupted, as kubectl -w");
});

test("version prints the client's and says what it found of the fleet", async () => {
  const { stdout } = await quarry("version");
  assert.match(stdout, /^Client Version: \d+\.\d+\.\d+/m);
  assert.match(stdout, /^Fleet Version: /m);
  const json = JSON.parse((await quarry("version", "--client", "-o", "json")).stdout) as Record<
    string,
    unknown
  >;
  assert.deepEqual(Object.keys(json), ["clientVersion"]);
});

test("doctor: the CRDs, the services, and a namespace lacking its opt-in RoleBinding", async () => {
  const scn = scenario();
  // a git request naming a token Secret: the namespace has not bound quarry-git-resolver-tokens
  await createRequest(
    scn.admin,
    newRequest(
      scn.namespace,
      "needs-token",
      { "resolution.tekton.dev/type": "git" },
      {
        url: "https://example.invalid/r.git",
        pathInRepo: "t.yaml",
        revision: "main",
        gitToken: "my-token",
      },
    ),
  );
  const result = await quarry("doctor", "--system-namespace", scn.namespace).catch(
    (e: { code?: number; stdout?: string }) => ({ stdout: e.stdout ?? "", code: e.code }),
  );
  const stdout = result.stdout;
  assert.match(stdout, /^\[ok\]\s+crds\s+resolutionrequests\.resolution\.tekton\.dev is served$/m);
  assert.match(stdout, /^\[(ok|warn)\]\s+policies\s/m);
  assert.match(stdout, /^\[(ok|warn)\]\s+tekton-resolvers\s/m);
  assert.match(
    stdout,
    new RegExp(
      `^\\[warn\\]\\s+opt-in ${scn.namespace}\\s+1 git request in ${scn.namespace} name gitToken without a RoleBinding to ClusterRole quarry-git-resolver-tokens`,
      "m",
    ),
  );
  assert.match(stdout, /→ kubectl -n .* create rolebinding quarry-git-resolver-tokens/);

  await applyObject(scn.admin, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: "quarry-git-resolver-tokens", namespace: scn.namespace },
    roleRef: {
      apiGroup: "rbac.authorization.k8s.io",
      kind: "ClusterRole",
      name: "quarry-git-resolver-tokens",
    },
    subjects: [{ kind: "ServiceAccount", name: "quarry-git-resolver", namespace: scn.namespace }],
  } as KubeObject);
  const json = await quarry("doctor", "--system-namespace", scn.namespace, "-o", "json").catch(
    (e: { stdout?: string }) => ({ stdout: e.stdout ?? "" }),
  );
  const { findings } = JSON.parse(json.stdout) as { findings: { check: string; level: string }[] };
  assert.equal(
    findings.find((f) => f.check === `opt-in ${scn.namespace}`),
    undefined,
    "bound now",
  );
});
