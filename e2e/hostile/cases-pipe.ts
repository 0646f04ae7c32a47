// Pipe strategies under policy (issue 23): each row is refused Forbidden,
// naming the field, before any pod is made (pipe-fixture.ts has the objects;
// the default pipe-resolver-config: nothing of the pod policy allowed).
import type { Param } from "@quarry/api";
import type { Ctx, HostileCase } from "./cases.ts";
import { clusterStrategyFor, FIXED_CN } from "./pipe-fixture.ts";

const P = (...pairs: [string, unknown][]): Param[] =>
  pairs.map(([name, value]) => ({ name, value }) as Param);

const row = (name: string, message: RegExp, params: (c: Ctx) => Param[]): HostileCase => ({
  name: `pipe-policy-${name}`,
  target: "pipe",
  reason: "Forbidden",
  message,
  request: (c) => ({ params: params(c) }),
  short: true,
});

const files = (entries: unknown[]) => JSON.stringify(entries);
const own = (strategy: string, kind: string, entries: unknown[]) =>
  P(["strategy", strategy], ["strategyKind", kind], ["files", files(entries)], ["cn", "a"]);
const KEY_AS_CONFIGMAP = [{ file: "/out/key", kind: "ConfigMap", key: "key" }];

export const PIPE_POLICY_CASES: HostileCase[] = [
  row(
    "pipe-downgrade",
    /^Pipe "downgrade": spec\.pipe\[0\]\.kind is ConfigMap, but PipeStrategy "strict" declares "\/out\/key" a Secret \(spec\.outputs\[0\]\): it may be stored only as a Secret$/,
    () => P(["pipe", "downgrade"]),
  ),
  row(
    "files-downgrade",
    /^request: param "files"\[0\]\.kind is ConfigMap, but PipeStrategy "open" declares "\/out\/key" a Secret/,
    () => own("open", "PipeStrategy", KEY_AS_CONFIGMAP),
  ),
  row(
    "fixed-param",
    /^param "cn" is fixed by Pipe "fixed" \(spec\.params\[0\]\.fixed\); a request may not give it another value$/,
    () => P(["pipe", "fixed"], ["cn", `not-${FIXED_CN}`]),
  ),
  row(
    "inline-files",
    /^param "files": PipeStrategy "strict" does not allow a request to name its own files/,
    () => own("strict", "PipeStrategy", [{ file: "/out/key", kind: "Secret", key: "key" }]),
  ),
  row(
    "privileged",
    /^PipeStrategy "privileged": the pipe resolver's pod policy refuses spec\.pod\.initContainers\[0\]\.securityContext\.privileged \(a privileged container; pod-policy-allow: privileged would allow it\)/,
    () => P(["pipe", "privileged"]),
  ),
  row(
    "host-path",
    /^PipeStrategy "host-path": the pipe resolver's pod policy refuses spec\.pod\.volumes\[1\]\.hostPath /,
    () => P(["pipe", "host-path"]),
  ),
  row(
    "host-network",
    /^PipeStrategy "host-network": the pipe resolver's pod policy refuses spec\.pod\.hostNetwork /,
    () => P(["pipe", "host-network"]),
  ),
  row(
    "service-account",
    /^PipeStrategy "service-account": the pipe resolver's pod policy refuses spec\.pod\.serviceAccountName \(ServiceAccount "deployer"; allowed-service-accounts would allow it\)/,
    () => P(["pipe", "service-account"]),
  ),
  row(
    "cluster-namespace",
    /^ClusterPipeStrategy "hostile-pipe-[-a-z0-9]+" may not be used from namespace "hostile-[-a-z0-9]+": its spec\.allowedNamespaces does not match it$/,
    (c) =>
      own(clusterStrategyFor(c.namespace), "ClusterPipeStrategy", [
        { file: "/out/x", kind: "ConfigMap", key: "x" },
      ]),
  ),
];
