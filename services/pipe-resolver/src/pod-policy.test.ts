// The pod policy: a strategy's pod spec in, the fields it refuses out.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { PodSpec } from "@quarry/api";
import {
  checkPodPolicy,
  defaultPodPolicy,
  POD_POLICY_RULES,
  type PodPolicy,
  podPolicyMessage,
  serviceAccountAllowed,
} from "./pod-policy.ts";
import { kep17Strategy } from "./testdata.ts";

const INIT = "spec.pod.initContainers[0]";

/** KEP-17's pod (ServiceAccount "pipe") with `change` applied to it. */
function pod(change: (p: PodSpec) => void = () => undefined): PodSpec {
  const p = kep17Strategy().spec.pod;
  delete p.serviceAccountName;
  change(p);
  return p;
}
const init = (p: PodSpec) => p.initContainers![0]!;

test("checkPodPolicy: by default each kind of host access is refused, naming the field and its rule", () => {
  const cases: [string, PodSpec, [string, string | undefined][]][] = [
    ["KEP-17's pod", pod(), []],
    ["the namespace's default ServiceAccount, by name", pod((p) => (p.serviceAccountName = "default")), []],
    ["explicitly off", pod((p) => Object.assign(p, { hostNetwork: false, hostPID: false })), []],
    [
      "privileged",
      pod((p) => (init(p).securityContext = { privileged: true })),
      [[`${INIT}.securityContext.privileged`, "privileged"]],
    ],
    [
      "privilege escalation",
      pod((p) => (init(p).securityContext = { allowPrivilegeEscalation: true })),
      [[`${INIT}.securityContext.allowPrivilegeEscalation`, "allowPrivilegeEscalation"]],
    ],
    ["escalation off", pod((p) => (init(p).securityContext = { allowPrivilegeEscalation: false })), []],
    [
      "added capabilities",
      pod((p) => (init(p).securityContext = { capabilities: { add: ["NET_ADMIN"], drop: ["ALL"] } })),
      [[`${INIT}.securityContext.capabilities.add`, "capabilities"]],
    ],
    [
      "dropped capabilities only",
      pod((p) => (init(p).securityContext = { capabilities: { drop: ["ALL"] } })),
      [],
    ],
    ["hostNetwork", pod((p) => (p.hostNetwork = true)), [["spec.pod.hostNetwork", "hostNetwork"]]],
    ["hostPID", pod((p) => (p.hostPID = true)), [["spec.pod.hostPID", "hostPID"]]],
    ["hostIPC", pod((p) => (p.hostIPC = true)), [["spec.pod.hostIPC", "hostIPC"]]],
    [
      "a hostPath volume",
      pod((p) => p.volumes!.push({ name: "root", hostPath: { path: "/" } })),
      [["spec.pod.volumes[2].hostPath", "hostPath"]],
    ],
    [
      "a host port",
      pod((p) => (init(p).ports = [{ containerPort: 80 }, { containerPort: 443, hostPort: 443 }])),
      [[`${INIT}.ports[1].hostPort`, "hostPort"]],
    ],
    [
      "a Windows host process, pod and container",
      pod((p) => {
        p.securityContext = { windowsOptions: { hostProcess: true } };
        init(p).securityContext = { windowsOptions: { hostProcess: true } };
      }),
      [
        ["spec.pod.securityContext.windowsOptions.hostProcess", "hostProcess"],
        [`${INIT}.securityContext.windowsOptions.hostProcess`, "hostProcess"],
      ],
    ],
    [
      "a ServiceAccount of the namespace",
      pod((p) => (p.serviceAccountName = "deployer")),
      [["spec.pod.serviceAccountName", undefined]],
    ],
    [
      "the deprecated serviceAccount field too",
      pod((p) => (p.serviceAccount = "deployer")),
      [["spec.pod.serviceAccount", undefined]],
    ],
    [
      "containers a valid strategy would not have are judged as well",
      pod((p) => {
        p.containers = [{ name: "c", securityContext: { privileged: true } }];
        p.ephemeralContainers = [{ name: "e", securityContext: { privileged: true } }];
      }),
      [
        ["spec.pod.containers[0].securityContext.privileged", "privileged"],
        ["spec.pod.ephemeralContainers[0].securityContext.privileged", "privileged"],
      ],
    ],
    [
      "everything at once, in field order",
      pod((p) => {
        p.serviceAccountName = "admin";
        p.hostNetwork = true;
        p.volumes!.push({ name: "docker", hostPath: { path: "/var/run/docker.sock" } });
        init(p).securityContext = { privileged: true, capabilities: { add: ["SYS_ADMIN"] } };
      }),
      [
        ["spec.pod.serviceAccountName", undefined],
        ["spec.pod.hostNetwork", "hostNetwork"],
        ["spec.pod.volumes[2].hostPath", "hostPath"],
        [`${INIT}.securityContext.privileged`, "privileged"],
        [`${INIT}.securityContext.capabilities.add`, "capabilities"],
      ],
    ],
  ];
  for (const [name, spec, want] of cases)
    assert.deepEqual(
      checkPodPolicy(spec, defaultPodPolicy, "team-a").map((v) => [v.field, v.rule]),
      want,
      name,
    );
});

test("checkPodPolicy: what the operator allows passes, and only that", () => {
  const everything = pod((p) => {
    p.hostNetwork = true;
    p.hostPID = true;
    p.volumes!.push({ name: "root", hostPath: { path: "/" } });
    init(p).securityContext = { privileged: true, capabilities: { add: ["NET_ADMIN"] } };
  });
  const allowAll: PodPolicy = { allow: new Set(POD_POLICY_RULES), serviceAccounts: [] };
  assert.deepEqual(checkPodPolicy(everything, allowAll, "team-a"), []);
  const some: PodPolicy = { allow: new Set(["hostNetwork", "hostPath"]), serviceAccounts: [] };
  assert.deepEqual(
    checkPodPolicy(everything, some, "team-a").map((v) => v.field),
    ["spec.pod.hostPID", `${INIT}.securityContext.privileged`, `${INIT}.securityContext.capabilities.add`],
  );
});

test("serviceAccountAllowed: default always; then name, namespace/name or *", () => {
  const policy: PodPolicy = { allow: new Set(), serviceAccounts: ["builder", "team-a/cert-issuer"] };
  const cases: [PodPolicy, string, string, boolean][] = [
    [defaultPodPolicy, "team-a", "default", true],
    [defaultPodPolicy, "team-a", "builder", false],
    [policy, "team-a", "builder", true],
    [policy, "team-b", "builder", true],
    [policy, "team-a", "cert-issuer", true],
    [policy, "team-b", "cert-issuer", false],
    [policy, "team-a", "team-a/cert-issuer", false],
    [{ allow: new Set(), serviceAccounts: ["*"] }, "team-b", "anyone", true],
  ];
  for (const [p, ns, account, want] of cases)
    assert.equal(serviceAccountAllowed(p, ns, account), want, `${p.serviceAccounts} ${ns}/${account}`);
  const spec = pod((p) => (p.serviceAccountName = "cert-issuer"));
  assert.deepEqual(checkPodPolicy(spec, policy, "team-a"), []);
  assert.equal(checkPodPolicy(spec, policy, "team-b").length, 1);
});

test("podPolicyMessage names the strategy, each field, what it asks for and the key that allows it", () => {
  const violations = checkPodPolicy(
    pod((p) => {
      p.serviceAccountName = "admin";
      init(p).securityContext = { privileged: true };
    }),
    defaultPodPolicy,
    "team-a",
  );
  assert.equal(
    podPolicyMessage('PipeStrategy "gen"', violations),
    'PipeStrategy "gen": the pipe resolver\'s pod policy refuses spec.pod.serviceAccountName (ServiceAccount "admin"; allowed-service-accounts would allow it), spec.pod.initContainers[0].securityContext.privileged (a privileged container; pod-policy-allow: privileged would allow it); an operator allows these in pipe-resolver-config',
  );
});
