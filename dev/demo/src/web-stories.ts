// The demo's requests to the resolvers that fetch from web servers: a Task
// over plain HTTP pinned by the digest of its bytes, the same URL pinned to a
// digest its content no longer has, and a Task from a hub by a version
// constraint (from the hub protocol fixture, hub.ts, since no hub is reachable).
import { LABEL_RESOLVER_TYPE, type ResolutionRequest } from "@quarry/api";
import { newRequest } from "@quarry/devcluster/scenario";
import type { DemoCluster } from "./cluster.ts";
import {
  HUB_CONSTRAINT,
  HUB_OUT_OF_RANGE,
  HUB_PICKED,
  HUB_PRERELEASE,
  HUB_TASK,
  HUB_VERSIONS,
  hubTraffic,
  versionOf,
} from "./hub.ts";
import type { Narrator } from "./narrator.ts";
import { requestOutcome } from "./summary.ts";
import { outcome, type Tracker } from "./tracker.ts";
import { LINT_PATH, LINT_TASK_BEFORE, sha256, webTraffic } from "./web.ts";

export interface WebStoryResults {
  fromHttp: ResolutionRequest;
  digestMismatch: ResolutionRequest;
  fromHub: ResolutionRequest;
}

export async function runWebStories(c: DemoCluster, n: Narrator, t: Tracker): Promise<WebStoryResults> {
  const ns = c.namespace;
  const { url, digest, log } = c.web;
  const http = { [LABEL_RESOLVER_TYPE]: "http" };

  n.say(`(5) a Task over http, pinned by the sha256 of its bytes: url=${url} digest=${digest}`);
  const served = log.length;
  const fromHttp = await n.record(
    "(5)",
    `a Task over http, pinned: ${LINT_PATH}`,
    async () => outcome(t, await t.create(newRequest(ns, "http-lint", http, { url, digest })), "True"),
    requestOutcome,
  );
  n.say(`  the web server answered ${webTraffic(log.slice(served))}`);

  // a digest taken before the file changed: what the server serves now is not what was pinned
  const stale = sha256(LINT_TASK_BEFORE);
  n.say(`(6) the same url pinned to the digest of the file's earlier content: digest=${stale}`);
  const servedAgain = log.length;
  const digestMismatch = await n.record(
    "(6)",
    "the same url, a digest it no longer has",
    async () =>
      outcome(t, await t.create(newRequest(ns, "http-lint-stale", http, { url, digest: stale })), "False"),
    requestOutcome,
  );
  n.say(
    `  the web server answered ${webTraffic(log.slice(servedAgain))}; the resolver fetched, hashed and refused the content`,
  );

  const { fixture } = c.hub;
  n.say(
    `(7) a Task from a hub by a version constraint: name=${HUB_TASK} version="${HUB_CONSTRAINT}" (type, kind and catalog default to artifact, task, tekton-catalog-tasks); the hub is a protocol fixture of Artifact Hub's API on loopback, not a hub, holding ${HUB_VERSIONS.join(", ")}`,
  );
  const asked = fixture.requests.length;
  const fromHub = await n.record(
    "(7)",
    `a Task from a hub: ${HUB_TASK}, version ${HUB_CONSTRAINT}`,
    async () => {
      const rr = await outcome(
        t,
        await t.create(
          newRequest(
            ns,
            "hub-notify",
            { [LABEL_RESOLVER_TYPE]: "hub" },
            { name: HUB_TASK, version: HUB_CONSTRAINT },
          ),
        ),
        "True",
      );
      const picked = versionOf(rr.status?.refSource?.uri);
      if (picked !== HUB_PICKED)
        throw new Error(
          `the hub resolver picked version ${picked}, not ${HUB_PICKED}, for "${HUB_CONSTRAINT}"`,
        );
      return rr;
    },
    requestOutcome,
  );
  n.say(`  the hub fixture answered ${hubTraffic(fixture.requests.slice(asked))}`);
  n.say(
    `  refSource names ${HUB_PICKED}: the highest release matching "${HUB_CONSTRAINT}" (${HUB_OUT_OF_RANGE} is out of range, ${HUB_PRERELEASE} a pre-release, which Artifact Hub's resolver never picks)`,
  );
  return { fromHttp, digestMismatch, fromHub };
}
