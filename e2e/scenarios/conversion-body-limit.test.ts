// The conversion webhook reads at most MAX_REVIEW_BYTES (3 MiB and the review around it) of a
// ConversionReview. That holds for every read the real apiserver makes, because it converts one
// object per review: a v1alpha1 list of requests far larger together than the limit (from its
// watch cache, and paged from etcd) reads whole. A longer body straight to the webhook port, as
// anyone the NetworkPolicy admits could send, is answered 413.
import assert from "node:assert/strict";
import { request } from "node:https";
import { after, before, test } from "node:test";
import { type ResolutionRequestV1Alpha1, resolutionRequests } from "@quarry/api";
import {
  type ConversionCluster,
  injectedCaBundle,
  resolutionRequestsV1Alpha1,
  startConversionCluster,
} from "@quarry/harness/conversion";
import { newRequest } from "@quarry/harness/scenario";
import { MAX_REVIEW_BYTES } from "@quarry/lifecycle-controller/webhook/server";

let cc: ConversionCluster;
before(async () => {
  cc = await startConversionCluster("conv-limit");
});
after(() => cc?.stop());

const COUNT = 5;
/** Each request's one param: together over the webhook's limit, each far under etcd's 1.5 MiB. */
const PARAM_BYTES = 900 * 1024;

test("v1alpha1 lists of requests larger together than the webhook's body limit read whole", async () => {
  const { scn } = cc;
  assert.ok(COUNT * PARAM_BYTES > MAX_REVIEW_BYTES);
  for (let i = 0; i < COUNT; i++)
    await scn.admin.create(
      resolutionRequests,
      newRequest(
        scn.namespace,
        `big-${i}`,
        { "resolution.tekton.dev/type": "git" },
        { p: "x".repeat(PARAM_BYTES) },
      ),
    );
  const sizes = (items: ResolutionRequestV1Alpha1[]) => items.map((rr) => rr.spec.params?.p?.length);
  const all = await scn.admin.list<ResolutionRequestV1Alpha1>(resolutionRequestsV1Alpha1, scn.namespace);
  assert.deepEqual(sizes(all.items), Array(COUNT).fill(PARAM_BYTES));
  // paged: each page from etcd, converted on the way out
  const paged: (number | undefined)[] = [];
  let cont: string | undefined;
  do {
    const page = await scn.admin.list<ResolutionRequestV1Alpha1>(resolutionRequestsV1Alpha1, scn.namespace, {
      limit: 2,
      ...(cont ? { continue: cont } : {}),
    });
    paged.push(...sizes(page.items));
    cont = page.metadata?.continue || undefined;
  } while (cont);
  assert.deepEqual(paged, Array(COUNT).fill(PARAM_BYTES));
});

test("a body over the limit straight to the webhook is answered 413", async () => {
  const ca = await injectedCaBundle(cc.scn);
  const status = await new Promise<number>((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: cc.webhookPort,
        path: "/convert",
        method: "POST",
        ca,
        servername: "localhost",
        headers: { "content-type": "application/json", "content-length": String(MAX_REVIEW_BYTES + 1) },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", reject);
    // the length alone is refused: nothing of the body needs sending
    req.write("{");
  });
  assert.equal(status, 413);
});
