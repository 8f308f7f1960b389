/**
 * CPU time spent by a process group and by this process, read from `/proc`
 * (Linux). Throughput on a shared 2-core machine moves with whatever else runs;
 * CPU time per request moves far less, so the benchmarks report both.
 */
import { readdirSync, readFileSync } from "node:fs";
import { cpus } from "node:os";

/** Clock ticks per second of `/proc/<pid>/stat` times (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

/**
 * CPU time (user + system, ms) used so far by every live process whose process
 * group is `pgid`, with the children each has waited for (a runtime that restarted: its
 * successor is live, its own time is in its parent's), plus this process.
 *
 * @param pgid the process group id (the pid of a child spawned with `detached: true`).
 * @returns milliseconds of CPU; 0 for the group where `/proc` is unavailable.
 */
export function groupCpuMs(pgid: number): number {
  let ticks = 0;
  let entries: string[] = [];
  try {
    entries = readdirSync("/proc");
  } catch {
    entries = [];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    // Fields after the command name (which may hold spaces), see proc(5):
    // state(3) ppid(4) pgrp(5) ... utime(14) stime(15) cutime(16) cstime(17).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) !== pgid) continue;
    ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  }
  const own = process.cpuUsage();
  return (ticks * 1000) / USER_HZ + (own.user + own.system) / 1000;
}

/** Number of logical CPUs, for the tables' headers. */
export const CPU_COUNT = cpus().length;

/**
 * Resident memory (kB) of the workerd processes of a process group (`VmRSS` of
 * `/proc/<pid>/status`), for the benchmarks that watch the server's memory.
 */
export function workerdRssKb(pgid: number): number {
  let kb = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== pgid || !stat.includes("(workerd)")) continue;
      const status = readFileSync(`/proc/${entry}/status`, "utf8");
      kb += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    } catch {
      // exited meanwhile
    }
  }
  return kb;
}
