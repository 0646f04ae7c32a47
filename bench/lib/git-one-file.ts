// What git-large-history.ts (through the service) and git-engines.ts (the engine alone) share:
// reading task.yaml at `main` of a repository with a large tip tree on the fixture server, cold, at
// a new commit and hot, against Tekton's way; every git process under /usr/bin/time; medians.
import { bulkPath, commitFiles, taskYaml } from "./git-repo.ts";
import { median, round } from "./stats.ts";

export const PATH_IN_REPO = "task.yaml";
export const PHASES = ["cold", "new commit", "hot"] as const;
export type OneFilePhase = (typeof PHASES)[number];

/** --runs and --tree-mb, the tree made of `fileSize` files. */
export const oneFileFlags = (fileSize: string) =>
  ({
    runs: {
      type: "int",
      default: 3,
      min: 1,
      help: "measurements of each way and phase; the table shows medians",
    },
    "tree-mb": { type: "int", default: 156, min: 1, help: `size of the tip tree, in ${fileSize} files` },
  }) as const;

/** The next commit on main: task.yaml (a Task named `task`) and the i-th history file change; returns its id. */
export const commitTaskChange = (
  bare: string,
  i: number,
  task: string,
  other: string | Buffer,
): Promise<string> =>
  commitFiles(
    bare,
    "main",
    { [PATH_IN_REPO]: taskYaml(task), [bulkPath("history", i)]: other },
    `bench ${i}`,
  );

/** Each field's median over `xs`, to two decimals. */
export function medians<T, K extends string>(
  xs: readonly T[],
  fields: Record<K, (x: T) => number>,
): Record<K, number> {
  const entries = Object.entries<(x: T) => number>(fields).map(([k, f]) => [k, round(median(xs.map(f)), 2)]);
  return Object.fromEntries(entries) as Record<K, number>;
}

/** `a ÷ b` as "n×", or "" when either is missing. */
export const ratio = (a: number | undefined, b: number): string =>
  a !== undefined && Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${round(a / b, 1)}×` : "";
