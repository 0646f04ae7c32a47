// What the demo's Pipe run needs before the pipe resolver starts: its config
// pointing pipe pods at the demo's node, the namespace's opt-in to pipe pods
// (pods, exec and output writes are not granted by the chart by default), and
// a PipeStrategy + Pipe that make a self-signed certificate with openssl.
import { type Pipe, type PipeStrategy, pipeStrategies, pipes, QUARRY_V1ALPHA1 } from "@quarry/api";
import { NODE_NAME, TOOLS_IMAGE } from "@quarry/devcluster/node";
import { grantOptInRules } from "@quarry/devcluster/opt-in-rbac";
import { type Scenario, setConfig } from "@quarry/devcluster/scenario";
import type { Narrator } from "./narrator.ts";

export const CERT_STRATEGY = "openssl-self-signed";
export const CERT_PIPE = "self-signed";
/** The Pipe's own common name; the demo's run overrides it with a param. */
export const CERT_PIPE_CN = "pipe.demo.quarry.test";
/** A pod on an idle node runs openssl and is copied from in seconds; this only bounds a stuck one. */
export const PIPE_PENDING_TIMEOUT = "60s";

/** The files the pod writes and the Secret each becomes (one Secret per key, `<run>-<pipe>-<key>`). */
export const CERT_FILES = [
  { file: "/out/tls.crt", kind: "Secret", key: "tls-crt" },
  { file: "/out/tls.key", kind: "Secret", key: "tls-key" },
] as const satisfies Pipe["spec"]["pipe"];

export function certStrategy(namespace: string): PipeStrategy {
  return {
    apiVersion: QUARRY_V1ALPHA1,
    kind: "PipeStrategy",
    metadata: { name: CERT_STRATEGY, namespace },
    spec: {
      params: [{ name: "cn" }, { name: "days", default: "1" }],
      pod: {
        // no token: the pod talks to nobody (and the demo's apiserver runs no ServiceAccount admission)
        automountServiceAccountToken: false,
        enableServiceLinks: false,
        // the waiting container is a `sleep`, which ignores SIGTERM: no point waiting 30s for it
        terminationGracePeriodSeconds: 1,
        volumes: [{ name: "out", emptyDir: {} }],
        initContainers: [
          {
            name: "openssl",
            // the node's tools image (busybox + openssl), imported into its containerd, never pulled
            image: TOOLS_IMAGE,
            imagePullPolicy: "Never",
            command: ["openssl"],
            args: [
              ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "$(params.days)"],
              ...["-subj", "/CN=$(params.cn)", "-keyout", "/out/tls.key", "-out", "/out/tls.crt"],
            ],
            volumeMounts: [{ name: "out", mountPath: "/out" }],
          },
        ],
      },
    },
  };
}

export function certPipe(namespace: string): Pipe {
  return {
    apiVersion: QUARRY_V1ALPHA1,
    kind: "Pipe",
    metadata: { name: CERT_PIPE, namespace },
    spec: {
      strategy: { kind: "PipeStrategy", name: CERT_STRATEGY },
      params: [{ name: "cn", value: CERT_PIPE_CN }],
      pipe: CERT_FILES.map((f) => ({ ...f })),
    },
  };
}

/**
 * Writes pipe-resolver-config (pods on the demo's node: its images, host
 * network, its name, the not-ready toleration, since it has no CNI), binds the
 * chart's opt-in rules in the demo namespace, and creates the strategy and Pipe.
 */
export async function configurePipes(scn: Scenario, n: Narrator): Promise<void> {
  const ns = scn.namespace;
  await setConfig(scn, "pipe-resolver-config", {
    "pending-timeout": PIPE_PENDING_TIMEOUT,
    "wait-image": TOOLS_IMAGE,
    "wait-image-pull-policy": "Never",
    "host-network": "true",
    "node-name": NODE_NAME,
    tolerations: "- key: node.kubernetes.io/not-ready\n  operator: Exists\n",
  });
  n.say(
    `  ${ns}/pipe-resolver-config: pending-timeout: ${PIPE_PENDING_TIMEOUT}, pods on node ${NODE_NAME} (host network, image ${TOOLS_IMAGE}, pull policy Never)`,
  );
  await grantOptInRules(scn, {
    service: "pipe-resolver",
    rulesKey: "pipeNamespaceRules",
    role: "quarry-pipe-resolver-namespace",
  });
  n.say(
    `  RoleBinding ${ns}/quarry-pipe-resolver-namespace: the namespace opts in to pipe pods (pods, exec, Secrets create-only)`,
  );
  await scn.admin.create(pipeStrategies, certStrategy(ns));
  await scn.admin.create(pipes, certPipe(ns));
  n.say(
    `  PipeStrategy ${ns}/${CERT_STRATEGY} (openssl req -x509 in an init container), Pipe ${ns}/${CERT_PIPE}`,
  );
}
