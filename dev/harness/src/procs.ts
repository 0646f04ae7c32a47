// Child processes of a service, from /proc (Linux), for tests that must act
// while a particular child (e.g. `git fetch`) is running.
import { readdirSync, readFileSync } from "node:fs";

export function childProcesses(ppid: number): { pid: number; cmdline: string }[] {
  const out: { pid: number; cmdline: string }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // field 4 (ppid) comes after the parenthesised command name, which may contain spaces
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) !== ppid) continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ").trim();
      out.push({ pid: Number(entry), cmdline });
    } catch {
      // the process exited while we looked
    }
  }
  return out;
}
