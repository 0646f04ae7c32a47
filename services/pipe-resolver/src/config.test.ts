import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError } from "@quarry/kube";
import { defaultPipeConfig, parsePipeConfig, pipeConfig } from "./config.ts";

test("parsePipeConfig: defaults, every key, and each bad value names its key", () => {
  assert.deepEqual(parsePipeConfig({}), defaultPipeConfig);
  assert.deepEqual(parsePipeConfig({ "resolution-timeout": "10s", "unknown-key": "x" }), defaultPipeConfig);
  assert.deepEqual(
    parsePipeConfig({
      "pending-timeout": "5m",
      "wait-image": "quarry.local/e2e/tools:local",
      "wait-image-pull-policy": "Never",
      "host-network": "true",
      "node-name": "127.0.0.1",
      tolerations: "- key: node.kubernetes.io/not-ready\n  operator: Exists\n  effect: NoSchedule\n",
      "pod-policy-allow": "hostPath, privileged\nhostNetwork",
      "allowed-service-accounts": "builder team-a/cert-issuer,*",
    }),
    {
      pendingTimeoutMs: 300_000,
      podDefaults: {
        waitImage: "quarry.local/e2e/tools:local",
        waitImagePullPolicy: "Never",
        hostNetwork: true,
        nodeName: "127.0.0.1",
        tolerations: [{ key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoSchedule" }],
      },
      podPolicy: {
        allow: new Set(["hostPath", "privileged", "hostNetwork"]),
        serviceAccounts: ["builder", "team-a/cert-issuer", "*"],
      },
    },
  );
  assert.deepEqual(defaultPipeConfig.podPolicy, { allow: new Set(), serviceAccounts: [] }, "nothing allowed");
  const bad: [Record<string, string>, string, RegExp][] = [
    [{ "pending-timeout": "soon" }, "pending-timeout", /soon/],
    [{ "pending-timeout": "0s" }, "pending-timeout", /positive/],
    [{ "wait-image": "busy box" }, "wait-image", /spaces/],
    [{ "wait-image-pull-policy": "Sometimes" }, "wait-image-pull-policy", /Always, IfNotPresent, Never/],
    [{ "host-network": "yes" }, "host-network", /true or false/],
    [{ "node-name": "Node_1" }, "node-name", /DNS-1123/],
    [{ tolerations: "key: a" }, "tolerations", /list/],
    [{ tolerations: "- [a]" }, "tolerations", /\[0\] must be a toleration/],
    [{ tolerations: "- {key: a, color: red}" }, "tolerations", /\[0\]\.color is not a toleration field/],
    [{ tolerations: "- {key: a, operator: Maybe}" }, "tolerations", /operator must be Exists or Equal/],
    [{ tolerations: "- {key: a, effect: Sometimes}" }, "tolerations", /effect must be/],
    [{ tolerations: "- {key: a, operator: Exists, value: b}" }, "tolerations", /takes no value/],
    [{ tolerations: "- {operator: Equal, value: b}" }, "tolerations", /without a key/],
    [{ tolerations: "- {key: a, tolerationSeconds: 5, effect: NoSchedule}" }, "tolerations", /NoExecute/],
    [{ tolerations: "- {key: a, tolerationSeconds: 1.5, effect: NoExecute}" }, "tolerations", /integer/],
    [{ tolerations: "- {key: 1}" }, "tolerations", /must be a string/],
    [{ tolerations: "[" }, "tolerations", /not YAML/],
    [
      { "pod-policy-allow": "privileged,root" },
      "pod-policy-allow",
      /"root" is not a pod policy rule; use any of privileged, /,
    ],
    [{ "pod-policy-allow": "Privileged" }, "pod-policy-allow", /"Privileged" is not/],
    [
      { "allowed-service-accounts": "Builder" },
      "allowed-service-accounts",
      /"Builder" is not a ServiceAccount/,
    ],
    [{ "allowed-service-accounts": "a/b/c" }, "allowed-service-accounts", /"a\/b\/c"/],
    [{ "allowed-service-accounts": "team-*" }, "allowed-service-accounts", /"team-\*"/],
  ];
  for (const [data, key, message] of bad) {
    assert.throws(
      () => parsePipeConfig(data),
      (err: unknown) => err instanceof ConfigError && err.key === key && message.test(err.message),
      JSON.stringify(data),
    );
  }
});

test("pipeConfig parses a config object once", () => {
  const data = { "pending-timeout": "1m" };
  assert.equal(pipeConfig(data), pipeConfig(data));
  assert.equal(pipeConfig(data).pendingTimeoutMs, 60_000);
});
