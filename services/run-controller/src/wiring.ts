// The run-controller on a service runtime: the run flavours this cluster serves
// (discovered once), per flavour the enforcing controller and the Pipe task's
// controller, sharing the runs and requests informers. Used by main.ts and by
// any process that hosts it beside other controllers.
import {
  type AnyRun,
  customRuns,
  type ResolutionRequest,
  resolutionRequests,
  runs,
  runView,
} from "@quarry/api";
import {
  discoverWith,
  LABEL_RUN,
  runFlavours,
  servesRun,
  TaskReconciler,
} from "@quarry/customtask-sdk/internal";
import { type Informer, keepWhole, type ServiceRuntime, untilAnswered } from "@quarry/kube";
import { CONFIG_MAP_NAME, defaultRunControllerConfig, parseRunControllerConfig } from "./config.ts";
import { enforcementCounter } from "./metrics.ts";
import { PipeTask } from "./pipe-task.ts";
import { RunReconciler } from "./reconciler.ts";

export async function wireRunController(runtime: ServiceRuntime): Promise<void> {
  const config = runtime.liveConfig(CONFIG_MAP_NAME, defaultRunControllerConfig, parseRunControllerConfig);
  const requests = runtime.informer<ResolutionRequest>(resolutionRequests, { labelSelector: LABEL_RUN });
  const onEnforcement = enforcementCounter(runtime.metrics.meter);
  const pipeTask = new PipeTask({ client: runtime.client, requests });
  // auto (the default): the flavours whose CRD is served, so a cluster without runs.tekton.dev works
  // retried like the informers: an apiserver down or refusing at start delays the service, never crashes it
  const discover = discoverWith(runtime.client);
  const flavours = await runFlavours(process.env.QUARRY_RUN_FLAVOURS, (groupVersion) =>
    untilAnswered(`discovery of ${groupVersion}`, () => discover(groupVersion), {
      log: runtime.log,
      signal: runtime.stopping,
    }),
  );
  runtime.log.info({ flavours }, "serving run flavours");

  for (const flavour of flavours) {
    const informer = runtime.informer<AnyRun>(flavour === "Run" ? runs : customRuns, {
      // the time a cancel was written is read from managedFields (decide.ts)
      transform: keepWhole,
    });
    const reconciler = new RunReconciler({
      client: runtime.client,
      runs: informer,
      requests,
      config: () => config.current(),
      recorder: runtime.recorder,
      log: runtime.log.child({ controller: `run-${flavour.toLowerCase()}` }),
      onEnforcement,
    });
    const controller = runtime.controller(`run-${flavour.toLowerCase()}`, reconciler);
    informer.on(controller.handlers<AnyRun>());
    informer.on({ onDelete: (run) => reconciler.forget(run.metadata.uid ?? "") });
    requests.on(
      controller.ownerHandlers<ResolutionRequest>({ ownerKind: flavour, ownerGroup: "tekton.dev" }),
    );

    // Pipe runs: their own queue, so a burst of pipes never delays enforcement of other runs
    const pipes = runtime.controller(
      `pipe-${flavour.toLowerCase()}`,
      new TaskReconciler({
        task: pipeTask,
        client: runtime.client,
        runs: informer,
        requests,
        recorder: runtime.recorder,
        log: runtime.log.child({ controller: `pipe-${flavour.toLowerCase()}` }),
        defaultTimeoutMs: () => config.current().defaultTimeoutMs,
        stopping: runtime.stopping,
      }),
    );
    informer.on(pipes.handlers<AnyRun>({ filter: (run) => servesRun(pipeTask, runView(run)) }));
    requests.on(pipes.ownerHandlers<ResolutionRequest>({ ownerKind: flavour, ownerGroup: "tekton.dev" }));
    // new settings move every pending deadline: look at every run again
    config.onChange(() => {
      for (const run of (informer as Informer<AnyRun>).list())
        controller.enqueue(`${run.metadata.namespace}/${run.metadata.name}`);
    });
  }
}
