// The demo's requests: what the resolvers do (a Task from git, a path git
// does not have, a Task from a bundle by tag, a name the bundle lacks, the
// http and hub stories of web-stories.ts, a Task from the cluster by the
// canonical label and by the seed's alias label) and
// what the lifecycle controller decides when no resolver answers (a type
// nobody serves times out; no resolver label at all is rejected at admission,
// or failed at once where the admission policy is off).
import {
  isDone,
  LABEL_RESOLVER_ALIAS,
  LABEL_RESOLVER_TYPE,
  type ResolutionRequest,
  resolutionRequests,
} from "@quarry/api";
import { serverMessage } from "@quarry/cli/errors";
import { newRequest } from "@quarry/devcluster/scenario";
import { isApiError, type KubeClient } from "@quarry/kube";
import { BUNDLE_TASK, registryTraffic, trafficAfter } from "./bundles.ts";
import { DEMO_TIMEOUT, type DemoCluster, GREET_TASK } from "./cluster.ts";
import { HELLO_PATH, HELLO_TAG, trafficSince } from "./git.ts";
import type { Narrator } from "./narrator.ts";
import { requestOutcome } from "./summary.ts";
import { outcome, succeededIs, type Tracker } from "./tracker.ts";
import { runWebStories, type WebStoryResults } from "./web-stories.ts";

export interface StoryResults extends WebStoryResults {
  fromGit: ResolutionRequest;
  gitNotFound: ResolutionRequest;
  fromBundle: ResolutionRequest;
  bundleNotFound: ResolutionRequest;
  timedOut: ResolutionRequest;
  unlabelled: ResolutionRequest;
}

export async function runStories(c: DemoCluster, n: Narrator, t: Tracker): Promise<StoryResults> {
  const ns = c.namespace;
  const { url, server } = c.repo;
  const git = { [LABEL_RESOLVER_TYPE]: "git" };

  n.say(`(1) a Task from git: url=${url} revision=main pathInRepo=${HELLO_PATH}`);
  const before = server.log.length;
  const fromGit = await n.record(
    "(1)",
    `a Task from git: ${HELLO_PATH} at main`,
    async () =>
      outcome(
        t,
        await t.create(newRequest(ns, "git-hello", git, { url, revision: "main", pathInRepo: HELLO_PATH })),
        "True",
      ),
    requestOutcome,
  );
  n.say(`  the git server answered ${trafficSince(server, before)}`);

  const missing = "tasks/goodbye.yaml";
  n.say(`(2) a path the repository does not have: revision=${HELLO_TAG} pathInRepo=${missing}`);
  const again = server.log.length;
  const gitNotFound = await n.record(
    "(2)",
    `a path git does not have: ${missing} at ${HELLO_TAG}`,
    async () =>
      outcome(
        t,
        await t.create(newRequest(ns, "git-goodbye", git, { url, revision: HELLO_TAG, pathInRepo: missing })),
        "False",
      ),
    requestOutcome,
  );
  // the tag names the commit (1) fetched, so its trees are in the resolver's on-disk cache
  const fetched = server.log.slice(again).some((e) => e.command === "fetch");
  n.say(
    `  the git server answered ${trafficSince(server, again)}${fetched ? "" : `; no fetch: ${HELLO_TAG} is the commit (1) fetched`}`,
  );

  const { registry, ref, digest } = c.bundle;
  const bundles = { [LABEL_RESOLVER_TYPE]: "bundles" };
  // every resolution of a tag ends with a GET (the manifest, or the layer after it);
  // a cached manifest and layer leave only the HEAD that maps the tag to its digest
  const manifestHead = (e: { method: string; path: string }) =>
    e.method === "HEAD" && e.path.includes("/manifests/");
  const endsWithGet = (e: { method: string; path: string }) =>
    e.method === "GET" && e.path.includes("/blobs/");

  n.say(`(3) a Task from a bundle by tag: bundle=${ref} name=${BUNDLE_TASK}`);
  const logged = registry.accessLog().length;
  const fromBundle = await n.record(
    "(3)",
    `a Task from a bundle by tag: ${BUNDLE_TASK}`,
    async () =>
      outcome(
        t,
        await t.create(newRequest(ns, "bundle-build", bundles, { bundle: ref, name: BUNDLE_TASK })),
        "True",
      ),
    requestOutcome,
  );
  n.say(`  the registry answered ${registryTraffic(await trafficAfter(registry, logged, endsWithGet))}`);
  const pinned = fromBundle.status?.refSource?.digest.sha256;
  n.say(
    pinned === digest.slice("sha256:".length)
      ? `  refSource pins the tag to the manifest digest tkn bundle push printed`
      : `  refSource sha256:${pinned} is not the digest tkn bundle push printed (${digest})`,
  );

  const absent = "deploy";
  n.say(`(4) a name the bundle does not hold: bundle=${ref} name=${absent}`);
  const loggedAgain = registry.accessLog().length;
  const bundleNotFound = await n.record(
    "(4)",
    `a name the bundle does not hold: ${absent}`,
    async () =>
      outcome(
        t,
        await t.create(newRequest(ns, "bundle-deploy", bundles, { bundle: ref, name: absent })),
        "False",
      ),
    requestOutcome,
  );
  const traffic = await trafficAfter(registry, loggedAgain, manifestHead);
  const refetched = traffic.some((e) => e.method === "GET" && e.path.includes("/manifests/"));
  n.say(
    `  the registry answered ${registryTraffic(traffic)}${refetched ? "" : "; the tag still names the digest (3) fetched, so the manifest came from the resolver's cache"}`,
  );

  const web = await runWebStories(c, n, t);

  n.say(`(8) a Task from the cluster: kind=task name=${GREET_TASK}`);
  await n.record(
    "(8)",
    `a Task from the cluster: ${GREET_TASK}`,
    async () =>
      outcome(
        t,
        await t.create(
          newRequest(
            ns,
            "cluster-greet",
            { [LABEL_RESOLVER_TYPE]: "cluster" },
            { kind: "task", name: GREET_TASK },
          ),
        ),
        "True",
      ),
    requestOutcome,
  );

  n.say(
    `(9) the seed's alias label ${LABEL_RESOLVER_ALIAS}=in-cluster, name=${GREET_TASK} (kind defaults to task)`,
  );
  await n.record(
    "(9)",
    "the same Task by the alias label in-cluster",
    async () => {
      let alias = await t.create(
        newRequest(ns, "in-cluster-greet", { [LABEL_RESOLVER_ALIAS]: "in-cluster" }, { name: GREET_TASK }),
      );
      // the controller sets the canonical label, which is what the cluster resolver watches for
      alias = await t.until(
        alias,
        "canonical label",
        (rr) => rr.metadata.labels?.[LABEL_RESOLVER_TYPE] === "cluster",
      );
      return outcome(t, alias, "True");
    },
    requestOutcome,
  );

  n.say(`(10) a type no resolver serves: the lifecycle controller times it out after ${DEMO_TIMEOUT}`);
  // (10)'s clock runs from its creation; (11) happens while it waits
  const started10 = n.now();
  let nonesuch = await t.create(newRequest(ns, "nonesuch-task", { [LABEL_RESOLVER_TYPE]: "nonesuch" }));
  nonesuch = await t.until(nonesuch, "ResolutionInProgress", succeededIs("Unknown"));

  n.say(`(11) a request with no resolver label, meanwhile`);
  await n.record(
    "(11)",
    "no resolver label, admission policy on",
    () => showAdmissionRejection(c.admin, n, ns),
    (status) => ({ outcome: "denied", reason: `at admission (HTTP ${status})` }),
  );
  const unlabelled = await n.record(
    "(11)",
    "no resolver label, admission policy off",
    async () => t.until(await t.create(newRequest(c.openNamespace, "unlabelled", {})), "failure", isDone),
    requestOutcome,
  );

  n.say(`waiting for (10) to time out`);
  const timedOut = await n.record(
    "(10)",
    "a type no resolver serves: nonesuch",
    () => t.until(nonesuch, "timeout", isDone),
    requestOutcome,
    started10,
  );
  return { fromGit, gitNotFound, fromBundle, bundleNotFound, ...web, timedOut, unlabelled };
}

/**
 * Creating a request without a resolver label where the policy applies is
 * denied by the apiserver. A freshly installed policy takes a moment to be
 * enforced; anything admitted before that is deleted and tried again.
 */
async function showAdmissionRejection(admin: KubeClient, n: Narrator, ns: string): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (let attempt = 1; ; attempt++) {
    const name = attempt === 1 ? "unlabelled" : `unlabelled-${attempt}`;
    try {
      await admin.create(resolutionRequests, newRequest(ns, name, {}));
    } catch (err) {
      if (!isApiError(err) || ![400, 403, 422].includes(err.status)) throw err;
      n.say(`${`${ns}/${name}`.padEnd(30)} denied at admission (HTTP ${err.status}), the apiserver says:`);
      n.say(`  ${serverMessage(err)}`);
      return err.status;
    }
    await admin.delete(resolutionRequests, ns, name);
    if (Date.now() > deadline) throw new Error("the admission policy was not enforced within 10s");
    await new Promise((r) => setTimeout(r, 250));
  }
}
