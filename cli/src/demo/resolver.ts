// The demo plays a git resolver for one request: it writes what a real
// resolver writes (status.data, annotations, refSource) so the lifecycle
// controller can complete the request. No git is involved.
import { createHash } from "node:crypto";
import { ANNOTATION_CONTENT_TYPE, type ResolutionRequest, type ResolutionRequestStatus } from "@quarry/api";
import { type KubeClient, resolutionRequests } from "@quarry/kube";

export const DEMO_REPO = "https://git.example.com/quarry/catalog.git";
export const DEMO_PATH = "task/hello/hello.yaml";

export const HELLO_TASK = `apiVersion: tekton.dev/v1
kind: Task
metadata:
  name: hello
spec:
  params:
    - name: who
      type: string
      default: world
  steps:
    - name: say-hello
      image: busybox
      script: |
        echo "hello, $(params.who)"
`;

/** The params a Tekton taskRef with `resolver: git` would carry. */
export const GIT_PARAMS = [
  { name: "url", value: DEMO_REPO },
  { name: "revision", value: "main" },
  { name: "pathInRepo", value: DEMO_PATH },
];

/** What the git resolver would write for HELLO_TASK; the "commit" is a stand-in digest of the file. */
export function resolvedStatus(): ResolutionRequestStatus {
  const commit = createHash("sha1").update(HELLO_TASK).digest("hex");
  return {
    data: Buffer.from(HELLO_TASK).toString("base64"),
    annotations: {
      [ANNOTATION_CONTENT_TYPE]: "application/x-yaml",
      "resolution.tekton.dev/url": DEMO_REPO,
      "resolution.tekton.dev/revision": commit,
      "resolution.tekton.dev/path": DEMO_PATH,
    },
    refSource: { uri: `git+${DEMO_REPO}`, digest: { sha1: commit }, entryPoint: DEMO_PATH },
  };
}

export async function answerAsGitResolver(client: KubeClient, rr: ResolutionRequest): Promise<void> {
  await client.mergePatch(
    resolutionRequests,
    rr.metadata.namespace,
    rr.metadata.name!,
    { status: resolvedStatus() },
    "status",
  );
}
