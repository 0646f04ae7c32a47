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
import { servesRun } from "./decide.ts";
import { discoverWith, type RunFlavour, runFlavours } from "./flavours.ts";
import { TaskReconciler } from "./reconciler.ts";
import { LABEL_RUN } from "./remote.ts";
import type { CustomTask } from "./task.ts";

export interface RunCustomTaskOptions {
  /** The task's ConfigMap in the service's namespace (key `default-timeout`, Tekton's 60m by default). */
  configMap: string;
  /**
   * Which flavours to serve; by default QUARRY_RUN_FLAVOURS (as the run-controller reads it):
   * `auto` (the default) serves those whose CRD the apiserver serves (flavours.ts).
   */
  flavours?: readonly RunFlavour[];
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
  const flavours =
    opts.flavours ?? (await runFlavours(process.env.QUARRY_RUN_FLAVOURS, discoverWith(runtime.client)));
  runtime.log.info({ flavours }, "serving run flavours");
  for (const flavour of flavours) {
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
