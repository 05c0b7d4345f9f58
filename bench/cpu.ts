// CPU time spent by the measured server and by PostgreSQL while a load ran, read from /proc
// (Linux only; elsewhere the figures are absent). With 2 cores shared by the load generator, the
// server and the database, throughput follows the CPU each request costs all of them together, so
// the per-request figures say which side a gap comes from.
import { readdirSync, readFileSync } from 'node:fs';

const TICK_US = 1_000_000 / 100; // USER_HZ is 100 on Linux

/** utime + stime of one process, in microseconds; NaN when /proc cannot tell. */
function processCpu(pid: number | string): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_US;
  } catch {
    return Number.NaN;
  }
}

/**
 * On-CPU time of a single-threaded process in microseconds, to the nanosecond (schedstat), where
 * stat counts 10 ms ticks: a backend's few µs a statement need the finer clock. NaN without it.
 */
function threadCpu(pid: string): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1000;
  } catch {
    return Number.NaN;
  }
}

/**
 * One PostgreSQL backend's CPU time in µs: a backend is one thread, so schedstat where the kernel
 * keeps it, else stat's ticks; NaN when it is not a process of this machine.
 */
export function backendCpu(pid: number | string): number {
  const fine = threadCpu(String(pid));
  return Number.isNaN(fine) ? processCpu(pid) : fine;
}

/** The CPU time of each PostgreSQL backend serving `database` (a backend's title names it). */
function postgresCpu(database: string): Map<string, number> {
  const cpu = new Map<string, number>();
  let dirs: string[];
  try {
    dirs = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return cpu;
  }
  for (const pid of dirs) {
    try {
      const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!title.startsWith('postgres: ') || !title.includes(` ${database} `)) continue;
    } catch {
      continue; // exited meanwhile
    }
    const t = backendCpu(pid);
    if (!Number.isNaN(t)) cpu.set(pid, t);
  }
  return cpu;
}

/** What the backends used between two readings; one started in between counts from zero. */
function used(before: Map<string, number>, after: Map<string, number>): number {
  let total = 0;
  for (const [pid, t] of after) total += t - (before.get(pid) ?? 0);
  return total;
}

/**
 * The system calls a process has made that read or write (/proc/<pid>/io: syscr + syscw); NaN
 * when /proc cannot tell. Socket writes dominate a small request's profile, so how many a request
 * makes says what a CPU gap of that kind is made of.
 */
function processSyscalls(pid: number): number {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    const field = (name: string) => Number(io.match(new RegExp(`^${name}: (\\d+)`, 'm'))?.[1]);
    return field('syscr') + field('syscw');
  } catch {
    return Number.NaN;
  }
}

export type CpuUse = { server: number; postgres: number; syscalls: number };

/** Starts counting; the returned function gives the microseconds used since, per request. */
export function cpuMeter(serverPid: number, database?: string): (requests: number) => CpuUse {
  const pgCpu = () => (database ? postgresCpu(database) : new Map<string, number>());
  const server0 = processCpu(serverPid);
  const syscalls0 = processSyscalls(serverPid);
  const pg0 = pgCpu();
  return (requests) => ({
    server: (processCpu(serverPid) - server0) / requests,
    postgres: used(pg0, pgCpu()) / requests,
    syscalls: (processSyscalls(serverPid) - syscalls0) / requests,
  });
}
