// Finds and stops child processes of this one by what their command line
// mentions. The control plane's start cannot be cancelled, so when Ctrl-C
// overtakes it, teardown stops etcd and kube-apiserver by their pids (found
// through their state directory) instead of waiting for the start to finish.
import { existsSync, readdirSync, readFileSync } from "node:fs";

/** Pids of this process's children whose command line contains `marker`; undefined without /proc. */
export function childrenMentioning(marker: string): number[] | undefined {
  if (!existsSync("/proc/self/stat")) return undefined;
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (parentOf(readFileSync(`/proc/${entry}/stat`, "utf8")) !== process.pid) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(marker)) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

/** The ppid field of /proc/<pid>/stat ("pid (comm) state ppid ..."; comm may contain spaces and parens). */
export function parentOf(stat: string): number {
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

/** SIGTERM, then SIGKILL whatever is still there after `graceMs`. */
export async function stopPids(pids: readonly number[], graceMs = 5000): Promise<void> {
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  for (const pid of pids) if (alive(pid)) process.kill(pid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  for (const pid of pids) if (alive(pid)) process.kill(pid, "SIGKILL");
}
