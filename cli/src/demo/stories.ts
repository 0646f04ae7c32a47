// The demo's four requests, one per outcome the lifecycle controller decides:
// resolved, alias label normalised then timed out, unknown resolver timed out,
// and no resolver label at all (rejected at admission, or failed at once
// where the admission policy is off).
import { isDone, LABEL_RESOLVER_ALIAS, LABEL_RESOLVER_TYPE, type ResolutionRequest } from "@quarry/api";
import { isApiError, type KubeClient, resolutionRequests } from "@quarry/kube";
import { newRequest } from "../../../e2e/harness/scenario.ts";
import { serverMessage } from "../errors.ts";
import type { DemoCluster } from "./cluster.ts";
import type { Narrator } from "./narrator.ts";
import { answerAsGitResolver, GIT_PARAMS, HELLO_TASK } from "./resolver.ts";
import { succeededIs, type Tracker } from "./tracker.ts";

export interface StoryResults {
  succeeded: ResolutionRequest;
  timedOut: ResolutionRequest;
  failed: ResolutionRequest;
}

export async function runStories(c: DemoCluster, n: Narrator, t: Tracker): Promise<StoryResults> {
  const ns = c.namespace;

  n.say(`(1) a git request; this demo plays the git resolver`);
  let git = await t.create(newRequest(ns, "git-hello", { [LABEL_RESOLVER_TYPE]: "git" }, GIT_PARAMS));
  git = await t.until(git, "ResolutionInProgress", succeededIs("Unknown"));
  await answerAsGitResolver(c.admin, git);
  t.note(
    git,
    `the "git resolver" wrote status.data (${Buffer.byteLength(HELLO_TASK)}-byte Task), annotations, refSource`,
  );
  git = await t.until(git, "success", succeededIs("True"));

  // both time out 5s after creation, so start their clocks together and show the rest meanwhile
  n.say(`(2) the seed's alias label ${LABEL_RESOLVER_ALIAS}=in-cluster, and (3) a type no resolver serves`);
  let alias = await t.create(newRequest(ns, "in-cluster-task", { [LABEL_RESOLVER_ALIAS]: "in-cluster" }));
  let nonesuch = await t.create(newRequest(ns, "nonesuch-task", { [LABEL_RESOLVER_TYPE]: "nonesuch" }));
  alias = await t.until(
    alias,
    "canonical label",
    // the controller sets the label first, then initialises the condition
    (rr) => rr.metadata.labels?.[LABEL_RESOLVER_TYPE] === "cluster" && succeededIs("Unknown")(rr),
  );
  nonesuch = await t.until(nonesuch, "ResolutionInProgress", succeededIs("Unknown"));

  n.say(`(4) a request with no resolver label`);
  await showAdmissionRejection(c.admin, n, ns);
  let unlabelled = await t.create(newRequest(c.openNamespace, "unlabelled", {}));
  unlabelled = await t.until(unlabelled, "failure", isDone);

  n.say(`waiting for (2) and (3) to time out`);
  alias = await t.until(alias, "timeout", isDone);
  await t.until(nonesuch, "timeout", isDone);
  return { succeeded: git, timedOut: alias, failed: unlabelled };
}

/**
 * Creating a request without a resolver label where the policy applies is
 * denied by the apiserver. A freshly installed policy takes a moment to be
 * enforced; anything admitted before that is deleted and tried again.
 */
async function showAdmissionRejection(admin: KubeClient, n: Narrator, ns: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (let attempt = 1; ; attempt++) {
    const name = attempt === 1 ? "unlabelled" : `unlabelled-${attempt}`;
    try {
      await admin.create(resolutionRequests, newRequest(ns, name, {}));
    } catch (err) {
      if (!isApiError(err) || ![400, 403, 422].includes(err.status)) throw err;
      n.say(`${`${ns}/${name}`.padEnd(30)} denied at admission (HTTP ${err.status}), the apiserver says:`);
      n.say(`  ${serverMessage(err)}`);
      return;
    }
    await admin.delete(resolutionRequests, ns, name);
    if (Date.now() > deadline) throw new Error("the admission policy was not enforced within 10s");
    await new Promise((r) => setTimeout(r, 250));
  }
}
