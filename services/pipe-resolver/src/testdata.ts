// Test data shared by the tests: KEP-17's example as a PipeStrategy and a Pipe.
import type { Pipe, PipeStrategy } from "@quarry/api";

export function kep17Strategy(): PipeStrategy {
  return {
    apiVersion: "quarry.dev/v1alpha1",
    kind: "PipeStrategy",
    metadata: {
      name: "gencert",
      namespace: "ns",
      annotations: {
        "kubernetes.io/egress-bandwidth": "10M",
        "kubectl.kubernetes.io/last-applied-configuration": "{}",
        "quarry.dev/reason": "x",
        "pipestrategy.quarry.dev/dummy": "x",
      },
      labels: { team: "a" },
    },
    spec: {
      params: [
        { name: "days", default: "365" },
        { name: "cn", type: "string" },
        { name: "flags", type: "array", default: ["-nodes"] },
      ],
      pod: {
        volumes: [
          { name: "shared-data", emptyDir: {} },
          { name: "ca", secret: { secretName: "ca" } },
        ],
        initContainers: [
          {
            name: "init",
            image: "alpine/openssl",
            command: ["openssl", "req", "$(params.flags[*])"],
            args: ["-days", "$(params.days)", "-subj", "/CN=$(params.cn)", "-keyout", "/tmp/MyKey.key"],
            env: [
              { name: "CN", value: "$(params.cn)" },
              { name: "FROM_SECRET", valueFrom: { secretKeyRef: { name: "s", key: "$(params.cn)" } } },
            ],
            volumeMounts: [
              { name: "shared-data", mountPath: "/tmp" },
              { name: "ca", mountPath: "/ca", readOnly: true },
            ],
            securityContext: { runAsUser: 1000 },
          },
        ],
        restartPolicy: "OnFailure",
        securityContext: { runAsNonRoot: true },
        serviceAccountName: "pipe",
      },
    },
  };
}

export function kep17Pipe(): Pipe {
  return {
    apiVersion: "quarry.dev/v1alpha1",
    kind: "Pipe",
    metadata: { name: "gencert", namespace: "ns" },
    spec: {
      strategy: { kind: "PipeStrategy", name: "gencert" },
      params: [{ name: "cn", value: "example.com" }],
      pipe: [
        { file: "/tmp/MyKey.key", kind: "Secret", key: "Mycertificate" },
        { envFile: "/tmp/build.env", kind: "ConfigMap", key: "env" },
      ],
    },
  };
}
