// The objects of the pipe policy rows (cases-pipe.ts): strategies whose pods
// the pipe resolver's default pod policy refuses, a strategy that declares its
// key a Secret and allows no request's own files, one that allows them, Pipes
// that try to store the key as a ConfigMap or mark a param fixed, and a
// ClusterPipeStrategy that allows another namespace only. The hostile world
// has no node: a pod the resolver made would never run, and the request would
// end PodPendingTimeout, not in the refusal a row expects.
import {
  type ClusterPipeStrategy,
  clusterPipeStrategies,
  type PipeEntry,
  type PipeStrategySpec,
  type PodSpec,
  pipeStrategies,
  pipes,
} from "@quarry/api";
import { pipeObject, pipeStrategy } from "@quarry/harness/pipe-scenario";
import type { Scenario } from "@quarry/harness/scenario";

/** The ClusterPipeStrategy only another namespace may use (cluster-scoped: named after the world's namespace). */
export const clusterStrategyFor = (namespace: string) => `hostile-pipe-${namespace}`;
/** The value a Pipe fixes for param cn. */
export const FIXED_CN = "api.example.test";

const PARAMS = [{ name: "cn" }];
const CN = [{ name: "cn", value: FIXED_CN }];
const KEY_SECRET: PipeStrategySpec["outputs"] = [
  { path: "/out/key", kind: "Secret" },
  { path: "/out/x", kind: "ConfigMap" },
];

function pod(change: (p: PodSpec) => void = () => undefined): PodSpec {
  const p: PodSpec = {
    volumes: [{ name: "out", emptyDir: {} }],
    initContainers: [
      {
        name: "gen",
        image: "busybox",
        command: ["sh", "-c", "echo $(params.cn) > /out/x; echo secret > /out/key"],
        volumeMounts: [{ name: "out", mountPath: "/out" }],
      },
    ],
  };
  change(p);
  return p;
}

/** Makes the objects; the returned function deletes the cluster-scoped one (the namespace takes the rest). */
export async function startPipePolicyWorld(
  scn: Scenario,
  otherNamespace: string,
): Promise<() => Promise<void>> {
  const ns = scn.namespace;
  const strategies: [string, PodSpec, Omit<PipeStrategySpec, "params" | "pod">][] = [
    ["strict", pod(), { outputs: KEY_SECRET }],
    ["open", pod(), { outputs: KEY_SECRET, allowInlineFiles: true }],
    ["privileged", pod((p) => (p.initContainers![0]!.securityContext = { privileged: true })), {}],
    ["host-path", pod((p) => p.volumes!.push({ name: "node", hostPath: { path: "/" } })), {}],
    ["host-network", pod((p) => (p.hostNetwork = true)), {}],
    ["service-account", pod((p) => (p.serviceAccountName = "deployer")), {}],
  ];
  for (const [name, spec, more] of strategies)
    await scn.admin.create(pipeStrategies, pipeStrategy(ns, name, spec, PARAMS, more));

  const x: PipeEntry[] = [{ file: "/out/x", kind: "Secret", key: "x" }];
  const strict = { kind: "PipeStrategy" as const, name: "strict" };
  for (const p of [
    pipeObject(ns, "downgrade", strict, [{ file: "/out/key", kind: "ConfigMap", key: "key" }], CN),
    pipeObject(ns, "fixed", strict, x, [{ ...CN[0]!, fixed: true }]),
    ...["privileged", "host-path", "host-network", "service-account"].map((name) =>
      pipeObject(ns, name, { kind: "PipeStrategy", name }, x, CN),
    ),
  ])
    await scn.admin.create(pipes, p);

  const name = clusterStrategyFor(ns);
  const cluster: ClusterPipeStrategy = {
    apiVersion: "quarry.dev/v1alpha1",
    kind: "ClusterPipeStrategy",
    metadata: { name },
    spec: {
      params: PARAMS,
      pod: pod(),
      outputs: KEY_SECRET,
      allowInlineFiles: true,
      allowedNamespaces: [otherNamespace],
    },
  };
  await scn.admin.create(clusterPipeStrategies, cluster);
  return async () => {
    await scn.admin.delete(clusterPipeStrategies, undefined, name).catch(() => {});
  };
}
