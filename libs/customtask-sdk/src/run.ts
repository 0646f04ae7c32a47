// runCustomTask: everything around a CustomTask. A custom-task controller's
// main.ts is `await runCustomTask(new WaitTask(), { configMap: "wait-task-config" })`.
import {
  type AnyRun,
  type CustomRun,
  customRuns,
  DEFAULT_RUN_TIMEOUT_MS,
  type ResolutionRequest,
  type Run,
  resolutionRequests,
  runs,
  runView,
} from "@quarry/api";
import { configDuration, type Informer, ServiceRuntime } from "@quarry/kube";
import { TaskReconciler } from "./controller.ts";
import { servesRun } from "./plan.ts";
import { LABEL_RUN } from "./remote.ts";
import type { CustomTask } from "./task.ts";

export interface RunCustomTaskOptions {
  /** The task's ConfigMap in the service's namespace (key `default-timeout`, Tekton's 60m by default). */
  configMap: string;
  /**
   * Which flavours to serve; by default QUARRY_RUN_FLAVOURS (as the run-controller reads it), else
   * both. A cluster without the v1alpha1 Run CRD (Tekton today) needs "CustomRun" only: an informer
   * on a missing resource never syncs, and nothing starts until every informer has.
   */
  flavours?: readonly ("Run" | "CustomRun")[];
  runtime?: ServiceRuntime;
}

export interface TaskConfig {
  defaultTimeoutMs: number;
}

export function parseTaskConfig(data: Record<string, string>, defaults: TaskConfig): TaskConfig {
  return {
    defaultTimeoutMs:
      data["default-timeout"] === undefined
        ? defaults.defaultTimeoutMs
        : configDuration("default-timeout", data["default-timeout"]),
  };
}

function flavoursFromEnv(): ("Run" | "CustomRun")[] {
  const text = process.env.QUARRY_RUN_FLAVOURS ?? "Run,CustomRun";
  return text.split(",").map((f) => {
    const flavour = f.trim();
    if (flavour !== "Run" && flavour !== "CustomRun")
      throw new Error(`QUARRY_RUN_FLAVOURS: unknown flavour "${flavour}" (use Run, CustomRun or both)`);
    return flavour;
  });
}

export async function runCustomTask(task: CustomTask, opts: RunCustomTaskOptions): Promise<ServiceRuntime> {
  const name = `${task.kind.toLowerCase()}-task`;
  const runtime = opts.runtime ?? new ServiceRuntime(name);
  const config = runtime.liveConfig<TaskConfig>(
    opts.configMap,
    { defaultTimeoutMs: DEFAULT_RUN_TIMEOUT_MS },
    parseTaskConfig,
  );
  // only requests made for runs: a custom task has no business with the rest
  const requests = runtime.informer<ResolutionRequest>(resolutionRequests, { labelSelector: LABEL_RUN });
  for (const flavour of opts.flavours ?? flavoursFromEnv()) {
    const rt = flavour === "Run" ? runs : customRuns;
    const informer = runtime.informer<Run | CustomRun>(rt) as Informer<AnyRun>;
    const controller = runtime.controller(
      `${name}-${flavour.toLowerCase()}`,
      new TaskReconciler({
        task,
        client: runtime.client,
        runs: informer,
        requests,
        recorder: runtime.recorder,
        log: runtime.log.child({ controller: name, flavour }),
        defaultTimeoutMs: () => config.current().defaultTimeoutMs,
        stopping: runtime.stopping,
      }),
    );
    informer.on(controller.handlers<AnyRun>({ filter: (run) => servesRun(task, runView(run)) }));
    requests.on(
      controller.ownerHandlers<ResolutionRequest>({ ownerKind: flavour, ownerGroup: "tekton.dev" }),
    );
  }
  await runtime.run();
  return runtime;
}
