import assert from "node:assert/strict";
import { test } from "node:test";
import type { Pod } from "@quarry/devcluster/pods";
import { podStateText } from "./pod-watch.ts";

const pod = (status: Pod["status"], deletionTimestamp?: string): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "p", namespace: "n", ...(deletionTimestamp ? { deletionTimestamp } : {}) },
  spec: { containers: [{ name: "quarry-wait" }] },
  status,
});

test("a pipe pod's state: phase, then each init and regular container", () => {
  assert.equal(podStateText(pod(undefined)), "Pending");
  assert.equal(
    podStateText(
      pod({
        phase: "Pending",
        initContainerStatuses: [{ name: "openssl", ready: false, restartCount: 0, state: { running: {} } }],
        containerStatuses: [
          {
            name: "quarry-wait",
            ready: false,
            restartCount: 0,
            state: { waiting: { reason: "PodInitializing" } },
          },
        ],
      }),
    ),
    "Pending, openssl: running, quarry-wait: waiting (PodInitializing)",
  );
  assert.equal(
    podStateText(
      pod({
        phase: "Running",
        initContainerStatuses: [
          {
            name: "openssl",
            ready: true,
            restartCount: 0,
            state: { terminated: { exitCode: 0, reason: "Completed", message: "what the pod wrote" } },
          },
        ],
        containerStatuses: [{ name: "quarry-wait", ready: true, restartCount: 0, state: { running: {} } }],
      }),
    ),
    "Running, openssl: exited 0 (Completed), quarry-wait: running",
  );
  // the resolver deleted it: the killed `sleep` makes the phase Failed, which is not the pipe's failure
  assert.equal(
    podStateText(
      pod(
        {
          phase: "Failed",
          initContainerStatuses: [
            { name: "openssl", ready: false, restartCount: 0, state: { terminated: { exitCode: 0 } } },
          ],
          containerStatuses: [
            {
              name: "quarry-wait",
              ready: false,
              restartCount: 0,
              state: { terminated: { exitCode: 137, reason: "Error" } },
            },
          ],
        },
        "2026-11-23T11:53:05Z",
      ),
    ),
    "Terminating, openssl: exited 0, quarry-wait: exited 137 (Error)",
  );
});
