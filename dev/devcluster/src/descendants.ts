// A process's descendants, from /proc (Linux): the program a chain of wrappers (unshare, the
// netns bridges) runs, and the processes a service forks, for figures and for signals.
import { readdirSync, readFileSync } from "node:fs";

const readOr = <T>(read: () => T, fallback: T): T => {
  try {
    return read();
  } catch {
    return fallback;
  }
};

/** All descendants of `pid` (not `pid` itself), from every thread's /proc/<pid>/task/<tid>/children. */
export function descendantsOf(pid: number): number[] {
  const children = (p: number) =>
    readOr(() => readdirSync(`/proc/${p}/task`), []).flatMap((tid) =>
      readOr(() => readFileSync(`/proc/${p}/task/${tid}/children`, "utf8"), "")
        .split(/\s+/)
        .filter(Boolean)
        .map(Number),
    );
  const out = children(pid);
  for (let i = 0; i < out.length; i++) out.push(...children(out[i]!));
  return out;
}

/** The pid of the first descendant of `root` whose command name is `comm`, waiting up to `timeoutMs`. */
export async function findDescendant(root: number, comm: string, timeoutMs = 10_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const pid of descendantsOf(root))
      if (readOr(() => readFileSync(`/proc/${pid}/comm`, "utf8").trim(), "") === comm) return pid;
    if (Date.now() > deadline) throw new Error(`no process "${comm}" under pid ${root}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
