// wait-task: the TEP-0002 Wait custom task as its own controller.
import { runCustomTask } from "@quarry/customtask-sdk";
import { WaitTask } from "./wait.ts";

await runCustomTask(new WaitTask(), { configMap: "wait-task-config" });
