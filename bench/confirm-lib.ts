// Shared by bench/confirm and bench/webhooks: option parsing, child processes (started with a
// stdin pipe, killed on every exit path), CPU accounting from /proc, scratch databases and Redis
// prefixes, the quiet-machine check, and the summary of a V8 .cpuprofile (self time by function,
// file and package, inside a time window).
import { spawn, execFileSync, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, totalmem } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { Redis } from 'ioredis';
import { createSql, ensureDatabase } from '../kernel/db.js';
import { migrate } from '../ops/migrate.js';

export const here = dirname(fileURLToPath(import.meta.url));
/**
 * dist/bench of the build under test: this tree's, or BENCH_APP_ROOT's (ops/bench.mjs --baseline
 * builds another commit there). The load generator is always this tree's code; only the app changes.
 */
export const appBench = (file: string) => (process.env.BENCH_APP_ROOT ? join(process.env.BENCH_APP_ROOT, 'dist', 'bench', file) : join(here, file));
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** CLOCK_MONOTONIC in microseconds: the clock of V8 CPU profiles, shared by every process of the machine. */
export const monoUs = () => Number(process.hrtime.bigint() / 1000n);

// ---------------------------------------------------------------------------------------------
// Options
export interface OptSpec {
  type: 'number' | 'string' | 'boolean';
  default?: number | string | boolean;
  min?: number;
  max?: number;
  help: string;
}

export function parseOptions<T extends Record<string, number | string | boolean | undefined>>(argv: string[], spec: Record<string, OptSpec>, usage: string): T {
  const out: Record<string, number | string | boolean | undefined> = {};
  for (const [k, s] of Object.entries(spec)) out[k] = s.default;
  const help = () => {
    const lines = Object.entries(spec).map(([k, s]) => `  --${k}${s.type === 'boolean' ? '' : ` <${s.type}>`}  ${s.help}${s.default !== undefined ? ` (default ${s.default})` : ''}`);
    return `${usage}\n${lines.join('\n')}\n`;
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2) as [string, string | undefined];
    if (flag === '--help' || flag === '-h') {
      process.stdout.write(help());
      process.exit(0);
    }
    if (!flag.startsWith('--')) throw new Error(`unexpected argument ${argv[i]} (try --help)`);
    let name = flag.slice(2);
    let negated = false;
    if (!(name in spec) && name.startsWith('no-') && spec[name.slice(3)]?.type === 'boolean') {
      name = name.slice(3);
      negated = true;
    }
    const s = spec[name];
    if (!s) throw new Error(`unknown option ${flag} (try --help)`);
    if (s.type === 'boolean') {
      out[name] = negated ? false : inline === undefined ? true : !/^(0|false|no|off)$/i.test(inline);
      continue;
    }
    const v = inline ?? argv[++i];
    if (v === undefined) throw new Error(`--${name} needs a value`);
    if (s.type === 'number') {
      const n = Number(v);
      if (!Number.isFinite(n) || (s.min !== undefined && n < s.min) || (s.max !== undefined && n > s.max)) throw new Error(`--${name} takes a number between ${s.min} and ${s.max}, got ${v}`);
      out[name] = n;
    } else out[name] = v;
  }
  return out as T;
}

// ---------------------------------------------------------------------------------------------
// Child processes
export class Children {
  private set = new Set<ChildProcess>();
  private hooked = false;

  constructor(private label: string) {}

  /**
   * Starts `node [nodeArgs] <script>`; resolves with the JSON of its `BENCH_READY {...}` stdout line.
   * The child gets a stdin pipe (our children exit when it closes, so they die with us) and, with
   * `ipc`, an IPC channel.
   */
  start<T>(name: string, script: string, o: { env?: NodeJS.ProcessEnv; nodeArgs?: string[]; readyTimeoutMs?: number; ipc?: boolean; args?: string[] } = {}): Promise<{ child: ChildProcess; info: T }> {
    this.hook();
    const stdio: Array<'pipe' | 'ipc'> = ['pipe', 'pipe', 'pipe'];
    if (o.ipc) stdio.push('ipc');
    const child = spawn(process.execPath, [...(o.nodeArgs ?? []), script, ...(o.args ?? [])], { stdio, env: o.env ?? process.env });
    this.set.add(child);
    child.on('exit', () => this.set.delete(child));
    child.stderr!.on('data', (d: Buffer) => process.stderr.write(prefixLines(`[${name}] `, d.toString())));
    const readyTimeoutMs = o.readyTimeoutMs ?? 120_000;
    return new Promise((resolve, reject) => {
      let buf = '';
      let ready = false;
      const timer = setTimeout(() => reject(new Error(`${name} did not report ready within ${readyTimeoutMs} ms`)), readyTimeoutMs);
      child.stdout!.on('data', (d: Buffer) => {
        buf += d.toString();
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (!ready && line.startsWith('BENCH_READY ')) {
            ready = true;
            clearTimeout(timer);
            try {
              resolve({ child, info: JSON.parse(line.slice('BENCH_READY '.length)) as T });
            } catch (e) {
              reject(e);
            }
          } else if (line.trim()) process.stderr.write(`[${name}] ${line}\n`);
        }
      });
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        if (!ready) reject(new Error(`${name} exited before it was ready (code ${code}, signal ${signal})`));
      });
      child.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
  }

  /**
   * Starts `node <args>` as it is (no BENCH_READY line: the caller polls it), output prefixed, killed with us.
   * `takeLine`, when given, sees each line of its stdout first; the lines it returns true for are not echoed.
   */
  spawnPlain(name: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string, takeLine?: (line: string) => boolean): ChildProcess {
    this.hook();
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'], env, cwd });
    this.set.add(child);
    child.on('exit', () => this.set.delete(child));
    if (takeLine) {
      let rest = '';
      child.stdout!.on('data', (d: Buffer) => {
        const lines = (rest + d.toString()).split('\n');
        rest = lines.pop()!;
        const echo = lines.filter((l) => !takeLine(l));
        if (echo.length) process.stderr.write(prefixLines(`[${name}] `, echo.join('\n') + '\n'));
      });
    } else child.stdout!.on('data', (d: Buffer) => process.stderr.write(prefixLines(`[${name}] `, d.toString())));
    child.stderr!.on('data', (d: Buffer) => process.stderr.write(prefixLines(`[${name}] `, d.toString())));
    return child;
  }

  /**
   * Takes a child started elsewhere (the supervisor's, startApp below): its stderr prefixed with
   * `name`, killed with us. Its stdout is the caller's.
   */
  adopt(name: string, child: ChildProcess): void {
    this.hook();
    this.set.add(child);
    child.on('exit', () => this.set.delete(child));
    child.stderr?.on('data', (d: Buffer) => process.stderr.write(prefixLines(`[${name}] `, d.toString())));
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the child has exited. */
  stop(c: ChildProcess, graceMs = 15_000): Promise<void> {
    return new Promise<void>((resolve) => {
      if (c.exitCode !== null || c.signalCode !== null) return resolve();
      const kill = setTimeout(() => c.kill('SIGKILL'), graceMs);
      c.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      c.kill('SIGTERM');
    });
  }

  /** Runs first in stopAll (a supervisor told to stop does not take its children's exits for crashes). */
  readonly stoppers = new Set<() => Promise<void>>();

  async stopAll(graceMs = 15_000): Promise<void> {
    await Promise.all([...this.stoppers].map((f) => f().catch(() => {})));
    await Promise.all([...this.set].map((c) => this.stop(c, graceMs)));
  }

  private hook() {
    if (this.hooked) return;
    this.hooked = true;
    process.on('exit', () => {
      for (const c of this.set) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    });
    for (const sig of ['SIGINT', 'SIGTERM'] as const) {
      process.once(sig, () => {
        process.stderr.write(`${this.label}: ${sig}, stopping the child processes\n`);
        void this.stopAll(5000).finally(() => process.exit(130));
      });
    }
  }
}

const prefixLines = (p: string, s: string) =>
  s
    .split('\n')
    .map((l, i, a) => (i === a.length - 1 && l === '' ? '' : p + l))
    .join('\n');

// ---------------------------------------------------------------------------------------------
// The app under test as `npm start -- --api N --workers M` runs it: N API processes on one port
// (uWS listens with SO_REUSEPORT) and M workers, under the supervisor of ops/processes.ts.
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });

export interface AppProcesses {
  /** The API port (every API process listens on it); 0 without API processes. */
  port: number;
  /** The pids by role, for CpuSampler and the profiles (a category sums all of its processes). */
  pids: { api: number[]; worker: number[] };
  /** Set when a process exited while the bench ran (the supervisor then stopped them all). */
  fatal(): string | undefined;
  stop(): Promise<void>;
}

/**
 * Starts `apis` API and `workers` worker processes of `main` through the supervisor npm start uses
 * (ops/processes.ts; this tree's, also for a BENCH_APP_ROOT build: it only spawns). Ready:
 * - `ready: 'line'` (bench/confirm-app, any build): each process printed `BENCH_READY {…}`; its stdin
 *   is a pipe from us, so it stops when we die;
 * - `ready: 'ipc'` (dist/ops/main.js): each process sent 'ready' on the IPC channel (main.js does
 *   since 0bfcad5; an older build never does and this times out).
 * A process that exits while we run stops them all (the supervisor restarts only processes that
 * said 'ready' over IPC, which confirm-app does not; a bench's figures assume none died).
 */
export async function startApp(children: Children, o: { main: string; cwd?: string; env: NodeJS.ProcessEnv; apis: number; workers: number; execArgv?: string[]; ready: 'line' | 'ipc'; port?: number; label?: string; readyTimeoutMs?: number }): Promise<AppProcesses> {
  const { supervise } = await import('../ops/processes.js');
  const port = o.apis > 0 ? (o.port ?? (await freePort())) : 0;
  const label = o.label ?? 'app';
  const pids: AppProcesses['pids'] = { api: [], worker: [] };
  const waits: Array<Promise<void>> = [];
  let fatal: string | undefined;
  let failReady: (e: Error) => void = () => {};
  const failed = new Promise<never>((_, reject) => (failReady = reject));
  failed.catch(() => {});
  const s = supervise({
    main: o.main,
    cwd: o.cwd ?? dirname(dirname(dirname(o.main))),
    env: { ...o.env, ...(o.apis > 0 ? { PORT: String(port) } : {}) },
    apis: o.apis,
    workers: o.workers,
    stdio: 'pipe',
    execArgv: o.execArgv ?? [],
    onSpawn: (role, i, proc) => {
      const name = `${label} ${role}${o[role === 'api' ? 'apis' : 'workers'] > 1 ? ` ${i + 1}` : ''}`;
      children.adopt(name, proc);
      pids[role].push(proc.pid!);
      waits.push(
        new Promise<void>((resolve) => {
          let buf = '';
          let seen = o.ready !== 'line';
          proc.stdout!.on('data', (d: Buffer) => {
            buf += d.toString();
            let nl: number;
            while ((nl = buf.indexOf('\n')) >= 0) {
              const line = buf.slice(0, nl);
              buf = buf.slice(nl + 1);
              if (!seen && line.startsWith('BENCH_READY ')) {
                seen = true;
                resolve();
              } else if (line.trim()) process.stderr.write(`[${name}] ${line}\n`);
            }
          });
          if (o.ready === 'ipc') proc.on('message', (m) => m === 'ready' && resolve());
        }),
      );
    },
    onExit: (role, i, how) => {
      fatal = `${label}: ${role} process ${i + 1} exited (${how}) while the bench ran; the supervisor starts it again`;
      process.stderr.write(`${fatal}\n`);
    },
    onFatal: (role, i, how) => {
      fatal = `${label}: ${role} process ${i + 1} exited (${how}); the supervisor stopped them all`;
      process.stderr.write(`${fatal}\n`);
      failReady(new Error(fatal));
    },
  });
  const timeoutMs = o.readyTimeoutMs ?? 120_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      Promise.all(waits),
      failed,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${label}: not every process reported ready within ${timeoutMs} ms${o.ready === 'ipc' ? " (a build whose ops/main.ts sends no IPC 'ready', before 0bfcad5, cannot run under the supervisor)" : ''}`)), timeoutMs);
      }),
    ]);
  } catch (e) {
    await s.stop('SIGKILL');
    throw e;
  } finally {
    clearTimeout(timer);
  }
  const stop = async () => {
    children.stoppers.delete(stop);
    // SIGTERM (the app stops cleanly, so that --cpu-prof writes its profile), SIGKILL after 15 s.
    const procs = s.running().map((r) => r.proc);
    const kill = setTimeout(() => procs.forEach((p) => p.kill('SIGKILL')), 15_000);
    await s.stop('SIGTERM');
    clearTimeout(kill);
  };
  children.stoppers.add(stop);
  return { port, pids, fatal: () => fatal, stop };
}

/** Sends an IPC request to a child and waits for the answer with the same `rid`. */
let rid = 0;
export function ask<T>(child: ChildProcess, msg: Record<string, unknown>, timeoutMs = 30_000): Promise<T> {
  const id = ++rid;
  return new Promise((resolve, reject) => {
    const onMsg = (m: unknown) => {
      const r = m as { rid?: number };
      if (r?.rid !== id) return;
      clearTimeout(timer);
      child.off('message', onMsg);
      resolve(m as T);
    };
    const timer = setTimeout(() => {
      child.off('message', onMsg);
      reject(new Error(`no IPC answer to ${JSON.stringify(msg).slice(0, 80)} within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('message', onMsg);
    child.send({ ...msg, rid: id });
  });
}

// ---------------------------------------------------------------------------------------------
// CPU accounting from /proc
let clkTck = 100;
try {
  clkTck = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
} catch {
  /* keep 100 */
}

/** A category's pids: none, one or several. */
export const pidList = (p: number | number[] | undefined): number[] => (p === undefined ? [] : Array.isArray(p) ? p.filter((x) => x !== undefined) : [p]);

/** CPU seconds of a process (all threads), and seconds its main thread spent runnable but waiting for a CPU. */
function readStat(pid: string, withWait = true): { comm: string; cpu: number; sys: number; wait: number; main: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const open = stat.indexOf('(');
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    let wait = 0;
    let main = 0;
    if (withWait) {
      try {
        const ss = readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ');
        main = Number(ss[0]) / 1e9 || 0;
        wait = Number(ss[1]) / 1e9 || 0;
      } catch {
        /* no schedstats in this kernel */
      }
    }
    return { comm: stat.slice(open + 1, close), cpu: (Number(fields[11]) + Number(fields[12])) / clkTck, sys: Number(fields[12]) / clkTck, wait, main };
  } catch {
    return null;
  }
}

/** Whole-machine CPU seconds from /proc/stat: busy (not idle/iowait), interrupts, and stolen by the hypervisor. */
export function machineCpuSeconds(): { busy: number; irq: number; steal: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = f;
  return { busy: (user + nice + system + irq + softirq) / clkTck, irq: (irq + softirq) / clkTck, steal: (steal ?? 0) / clkTck };
}

export interface CpuReport {
  wallS: number;
  /** % of one core per category over the window. */
  pct: Record<string, number>;
  /**
   * Per category: time its (main) threads were runnable but waited for a CPU, in % of the window
   * (from /proc/<pid>/schedstat). High values mean the process was starved, not idle.
   */
  waitPct: Record<string, number>;
  /** Per category: time on a CPU of the (main) threads only, from schedstat (ns resolution), in % of the window. */
  mainPct: Record<string, number>;
  machineBusyPct: number;
  stealPct: number;
  /** Of machine busy: hardware and soft interrupts (loopback TCP is mostly softirq). */
  irqPct: number;
  /** Machine busy time not in any category (interrupts, other processes). */
  otherPct: number;
  /** Per named category: how many processes it sums (1 but for `--api N`/`--workers M`). */
  procs: Record<string, number>;
  /** Per named process: read and write syscalls (read/readv, write/writev; not send/recv) during the window, from /proc/<pid>/io. */
  syscalls: Record<string, { r: number; w: number }>;
  /** The busiest processes outside the categories, by command name (% of one core). */
  topOthers: Array<{ pid: number; comm: string; cmd: string; pct: number }>;
}

/**
 * Samples /proc every `intervalMs`: the named pids (process totals, all threads), every `postgres`
 * process (backends come and go: a pid first seen during the window counts from 0, an exited one
 * keeps its last reading), `redis-server`, `pgbench`. Categories are exclusive.
 */
export class CpuSampler {
  private base = new Map<string, { cat: string; v0: number; last: number; w0: number; wlast: number; m0: number; mlast: number }>();
  private timer?: NodeJS.Timeout;
  private t0 = 0n;
  private m0 = machineCpuSeconds();
  private io0: Record<string, { r: number; w: number }> = {};

  private io(): Record<string, { r: number; w: number }> {
    const out: Record<string, { r: number; w: number }> = {};
    for (const [name, pids] of Object.entries(this.named)) {
      for (const pid of pidList(pids)) {
        try {
          const t = readFileSync(`/proc/${pid}/io`, 'utf8');
          const o = (out[name] ??= { r: 0, w: 0 });
          o.r += Number(/syscr: (\d+)/.exec(t)?.[1] ?? NaN);
          o.w += Number(/syscw: (\d+)/.exec(t)?.[1] ?? NaN);
        } catch {
          /* exited, or not ours */
        }
      }
    }
    return out;
  }
  /**
   * `named`: a category per name, of one pid or of several (every API process of `--api N`): the
   * category sums all of them; `procs` in the report says how many.
   */
  constructor(
    private named: Record<string, number | number[] | undefined>,
    private intervalMs = 500,
  ) {}

  private categorize(pid: string, comm: string): string {
    for (const [name, p] of Object.entries(this.named)) if (pidList(p).some((x) => String(x) === pid)) return name;
    if (comm === 'postgres' || comm === 'postmaster') return 'postgres';
    if (comm.startsWith('redis-server')) return 'redis';
    if (comm === 'pgbench') return 'pgbench';
    return `other:${comm}`;
  }

  private poll(first: boolean) {
    let pids: string[];
    try {
      pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
    } catch {
      return;
    }
    for (const pid of pids) {
      const known = this.base.get(pid);
      const s = readStat(pid, !known || !known.cat.startsWith('other:'));
      if (!s) continue;
      if (known) {
        known.last = s.cpu;
        known.wlast = s.wait;
        known.mlast = s.main;
        continue;
      }
      const cat = this.categorize(pid, s.comm);
      this.base.set(pid, { cat, v0: first ? s.cpu : 0, last: s.cpu, w0: first ? s.wait : 0, wlast: s.wait, m0: first ? s.main : 0, mlast: s.main });
    }
  }

  start(): this {
    this.t0 = process.hrtime.bigint();
    this.m0 = machineCpuSeconds();
    this.io0 = this.io();
    this.poll(true);
    this.timer = setInterval(() => this.poll(false), this.intervalMs);
    return this;
  }

  stop(): CpuReport {
    clearInterval(this.timer);
    this.poll(false);
    const wallS = Number(process.hrtime.bigint() - this.t0) / 1e9;
    const m1 = machineCpuSeconds();
    const io1 = this.io();
    const syscalls: Record<string, { r: number; w: number }> = {};
    for (const [k, v] of Object.entries(io1)) if (this.io0[k]) syscalls[k] = { r: v.r - this.io0[k].r, w: v.w - this.io0[k].w };
    const sums: Record<string, number> = {};
    const waits: Record<string, number> = {};
    const mains: Record<string, number> = {};
    for (const name of Object.keys(this.named)) sums[name] = 0;
    for (const v of this.base.values()) {
      sums[v.cat] = (sums[v.cat] ?? 0) + (v.last - v.v0);
      waits[v.cat] = (waits[v.cat] ?? 0) + (v.wlast - v.w0);
      mains[v.cat] = (mains[v.cat] ?? 0) + (v.mlast - v.m0);
    }
    const waitPct: Record<string, number> = {};
    const mainPct: Record<string, number> = {};
    for (const [k, v] of Object.entries(waits)) if (!k.startsWith('other:')) waitPct[k] = (100 * v) / wallS;
    for (const [k, v] of Object.entries(mains)) if (!k.startsWith('other:')) mainPct[k] = (100 * v) / wallS;
    const pct: Record<string, number> = {};
    let accounted = 0;
    for (const [k, v] of Object.entries(sums)) {
      if (k.startsWith('other:')) continue;
      pct[k] = (100 * v) / wallS;
      accounted += pct[k];
    }
    const others: CpuReport['topOthers'] = [];
    for (const [pid, v] of this.base) {
      const p = (100 * (v.last - v.v0)) / wallS;
      if (!v.cat.startsWith('other:') || p < 1) continue;
      let cmd = '';
      try {
        cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim().slice(0, 100);
      } catch {
        /* exited */
      }
      others.push({ pid: Number(pid), comm: v.cat.slice(6), cmd, pct: Math.round(p * 10) / 10 });
    }
    const machineBusyPct = (100 * (m1.busy - this.m0.busy)) / wallS;
    const procs: Record<string, number> = {};
    for (const [name, p] of Object.entries(this.named)) procs[name] = pidList(p).length;
    return {
      wallS,
      pct,
      waitPct,
      mainPct,
      procs,
      syscalls,
      machineBusyPct,
      stealPct: (100 * (m1.steal - this.m0.steal)) / wallS,
      irqPct: (100 * (m1.irq - this.m0.irq)) / wallS,
      otherPct: Math.max(0, machineBusyPct - accounted),
      topOthers: others.sort((a, b) => b.pct - a.pct).slice(0, 4),
    };
  }
}

// ---------------------------------------------------------------------------------------------
// Machine, quiet check
/** The commit under test and the files that differ from it (read-only git; bench/ itself excluded). */
export function sourceInfo(): { commit: string; dirty: string[] } {
  const git = (args: string[]) => execFileSync('git', ['--no-optional-locks', ...args], { cwd: join(here, '..', '..'), stdio: ['ignore', 'pipe', 'ignore'] }).toString();
  try {
    const commit = git(['rev-parse', '--short', 'HEAD']).trim();
    const dirty = git(['status', '--porcelain', '--untracked-files=no'])
      .split('\n')
      .map((l) => l.slice(3).trim())
      .filter((f) => f && !f.startsWith('bench/') && f !== 'package.json');
    return { commit, dirty };
  } catch {
    return { commit: 'unknown', dirty: [] };
  }
}

export function machineInfo() {
  return {
    date: new Date().toISOString(),
    node: process.version,
    nproc: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
  };
}

/** Other benchmark processes (autocannon, dist/bench/*, pgbench) that are not ours. */
export function otherBenchmarks(ours: Set<number>): string[] {
  const found: string[] = [];
  let pids: string[] = [];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return found;
  }
  // Our ancestors (npm run → ops/bench.mjs → us) are not "others".
  const mine = new Set(ours);
  mine.add(process.pid);
  let p = process.ppid;
  for (let i = 0; i < 6 && p > 1; i++) {
    mine.add(p);
    try {
      const st = readFileSync(`/proc/${p}/stat`, 'utf8');
      p = Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      break;
    }
  }
  // Our descendants (the app children and load of this bench) are not "others" either.
  const parentOf = new Map<number, number>();
  for (const pid of pids) {
    try {
      const st = readFileSync(`/proc/${pid}/stat`, 'utf8');
      parentOf.set(Number(pid), Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone */
    }
  }
  const descendsFromUs = (pid: number) => {
    for (let p = parentOf.get(pid), i = 0; p && p > 1 && i < 16; p = parentOf.get(p), i++) if (p === process.pid) return true;
    return false;
  };
  for (const pid of pids) {
    if (mine.has(Number(pid)) || descendsFromUs(Number(pid))) continue;
    let cmd = '';
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
    } catch {
      continue;
    }
    // `flock <lock> node dist/bench/…`, and whatever wraps it (`timeout`, `sh -c`), is waiting for
    // its turn: the running bench is flock's child, whose command line has no `flock`.
    if (/(^|[\s/])flock\s/.test(cmd)) continue;
    if (/autocannon|dist\/bench\/|(^|\/)pgbench /.test(cmd)) found.push(`${pid} ${cmd.slice(0, 120)}`);
  }
  return found;
}

/**
 * Waits (polling) until no other benchmark runs and the machine stayed mostly idle for `quietS`
 * consecutive seconds, for at most `maxWaitS`. Another benchmark still running after that is an
 * error; a busy machine only a warning.
 */
export async function waitForQuiet(label: string, maxWaitS: number, busyLimitPct = 25, quietS = 5): Promise<{ busyPct: number; stealPct: number; waitedS: number; warning?: string }> {
  const t0 = Date.now();
  let said = '';
  let quietFor = 0;
  let maxBusy = 0;
  let maxSteal = 0;
  for (;;) {
    const others = otherBenchmarks(new Set());
    const a = machineCpuSeconds();
    await sleep(1000);
    const b = machineCpuSeconds();
    const busyPct = 100 * (b.busy - a.busy);
    const stealPct = 100 * (b.steal - a.steal);
    const waitedS = (Date.now() - t0) / 1000;
    if (!others.length && busyPct + stealPct <= busyLimitPct) {
      quietFor++;
      maxBusy = Math.max(maxBusy, busyPct);
      maxSteal = Math.max(maxSteal, stealPct);
      if (quietFor >= quietS) return { busyPct: maxBusy, stealPct: maxSteal, waitedS };
      continue;
    }
    quietFor = 0;
    maxBusy = maxSteal = 0;
    const why = others.length ? `another benchmark is running: ${others.join(' | ')}` : `the machine is ${busyPct.toFixed(0)}% busy, ${stealPct.toFixed(0)}% stolen by the hypervisor (of one core)`;
    if (waitedS >= maxWaitS) {
      if (others.length) throw new Error(`${label}: ${why}; gave up after ${maxWaitS} s`);
      return { busyPct, stealPct, waitedS, warning: `machine not idle before the run: ${why}` };
    }
    if (why.split(':')[0] !== said) process.stdout.write(`${label}: waiting: ${why}\n`);
    said = why.split(':')[0];
    await sleep(2000);
  }
}

// ---------------------------------------------------------------------------------------------
// Postgres scratch databases, Redis prefixes
export const baseDbUrl = () => process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function dbUrl(name: string): string {
  const u = new URL(baseDbUrl());
  u.pathname = `/${name}`;
  return u.toString();
}

export async function dropDatabase(name: string): Promise<void> {
  const sql = postgres(dbUrl('postgres'), { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    await sql.unsafe(`drop database if exists "${name.replace(/"/g, '""')}" with (force)`);
  } finally {
    await sql.end({ timeout: 2 });
  }
}

export async function pgServerInfo(): Promise<{ version: string; settings: Record<string, string> }> {
  const sql = postgres(dbUrl('postgres'), { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    const [v] = await sql`select version() as v`;
    const rows = await sql`select name, setting, unit from pg_settings where name in ('max_connections','shared_buffers','synchronous_commit','fsync','wal_level','max_wal_size')`;
    const settings: Record<string, string> = {};
    for (const r of rows) settings[r.name as string] = `${r.setting}${r.unit ? ` ${r.unit}` : ''}`;
    return { version: String(v.v).split(' on ')[0], settings };
  } finally {
    await sql.end({ timeout: 2 });
  }
}

export async function checkpoint(): Promise<void> {
  const sql = postgres(dbUrl('postgres'), { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    await sql`checkpoint`;
  } finally {
    await sql.end({ timeout: 2 });
  }
}

/**
 * A tenant made through the admin API of the app under test (`POST /admin/tenants`): its id and its
 * test-mode secret key. Throws with the answer when the app refuses (every bench needs one).
 */
export async function benchTenant(base: string, adminKey: string, name: string): Promise<{ id: string; key: string }> {
  const r = await fetch(`${base}/admin/tenants`, { method: 'POST', headers: { 'x-admin-key': adminKey, 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
  const text = await r.text();
  if (r.status !== 201) throw new Error(`tenant creation answered ${r.status}: ${text.slice(0, 300)}`);
  const t = JSON.parse(text) as { id: string; api_keys?: Array<{ key: string; livemode: boolean }> };
  const key = t.api_keys?.find((k) => !k.livemode && k.key?.startsWith('sk_test_'))?.key;
  if (!key) throw new Error(`no sk_test_ key in the created tenant: ${text.slice(0, 300)}`);
  return { id: t.id, key };
}

export const redisUrl = () => process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0';

export async function deleteRedisPrefix(prefix: string): Promise<number> {
  const redis = new Redis(redisUrl(), { maxRetriesPerRequest: 2, lazyConnect: false });
  let n = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) n += await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return n;
}

/**
 * A scratch database with the app's migrations and one tenant row: what pgbench's scripts and the bare
 * stack write into (their SQL names the tenant). Creates it; the caller drops it (dropDatabase).
 */
export async function migratedScratch(name: string, tenantId: string, tenantName: string): Promise<void> {
  await ensureDatabase(dbUrl(name));
  const sql = createSql(dbUrl(name), 2);
  try {
    await migrate(sql);
    await sql`insert into tenants (id, name) values (${tenantId}, ${tenantName})`;
  } finally {
    await sql.end({ timeout: 2 });
  }
}

export interface BareStack {
  /** The API's port (0 without the api role). */
  port: number;
  /** The bearer token it accepts. */
  key: string;
  /** Its scratch database (with `tenant`'s row). */
  url: string;
  pids: { api?: number; worker?: number };
  /** Stops its processes, drops its database and its Redis keys (again harmless). */
  stop(): Promise<void>;
}

/**
 * The bare stack (bench/skeleton-app: the chosen stack sending the benches' SQL with no app code): the
 * processes of `roles` on a scratch database and Redis prefix of their own, `tenant` the tenant its SQL
 * names. `env` adds settings (DATABASE_POOL_MAX, WORKER_CONCURRENCY). Always this tree's build, also
 * in a guard's baseline runs: the same code on both sides, the guard's control.
 */
export async function startBareStack(children: Children, o: { label: string; tenant: string; roles: Array<'api' | 'worker'>; env?: NodeJS.ProcessEnv }): Promise<BareStack> {
  const name = `orq_bench_${o.label}_skel_${randomBytes(4).toString('hex')}`;
  const key = `sk_skeleton_${randomBytes(16).toString('hex')}`;
  const started: ChildProcess[] = [];
  const stop = async () => {
    for (const c of started) await children.stop(c, 5000);
    await dropDatabase(name);
    await deleteRedisPrefix(name);
  };
  try {
    await migratedScratch(name, o.tenant, 'skeleton');
    const env = { ...process.env, ...o.env, DATABASE_URL: dbUrl(name), REDIS_PREFIX: name, SKELETON_KEY: key };
    const pids: BareStack['pids'] = {};
    let port = 0;
    for (const role of o.roles) {
      const p = await children.start<{ port: number | null; pid: number }>(`skeleton-${role}`, join(here, 'skeleton-app.js'), { env, args: [role], readyTimeoutMs: 30_000 });
      started.push(p.child);
      pids[role] = p.info.pid;
      if (role === 'api') port = p.info.port ?? 0;
    }
    return { port, key, url: dbUrl(name), pids, stop };
  } catch (e) {
    await stop().catch(() => {});
    throw e;
  }
}

export async function redisCpuSeconds(): Promise<number | null> {
  const redis = new Redis(redisUrl(), { maxRetriesPerRequest: 2, lazyConnect: false });
  try {
    const info = await redis.info('cpu');
    const get = (k: string) => Number(new RegExp(`^${k}:([0-9.]+)`, 'm').exec(info)?.[1] ?? NaN);
    const v = get('used_cpu_sys') + get('used_cpu_user');
    return Number.isFinite(v) ? v : null;
  } finally {
    redis.disconnect();
  }
}

// ---------------------------------------------------------------------------------------------
// Numbers and tables
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (!sorted.length) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export function latencyStats(values: number[]) {
  const s = Float64Array.from(values).sort();
  const sum = values.reduce((a, b) => a + b, 0);
  return { n: values.length, avg: values.length ? sum / values.length : NaN, p50: percentile(s, 50), p90: percentile(s, 90), p99: percentile(s, 99), max: s.length ? s[s.length - 1] : NaN };
}

/** The young generation's work over a set of `node --trace-gc-nvp` lines (see gcNvp). */
export interface YoungGenStats {
  scavenges: number;
  /** Of the young bytes allocated between scavenges, the share promoted to the old generation, %. */
  promotedPct: number;
  /** The share copied within the young generation (kept once), %. */
  keptPct: number;
  /** Mean scavenge pause, ms. */
  pauseMs: number;
  markCompacts: number;
}

/**
 * Sums `--trace-gc-nvp` lines (`[pid:0x…]   1234 ms: pause=… gc=s … allocated=… promoted=… new_space_survived=…`)
 * taken at or after `fromMs` of the isolate's clock; other lines are ignored. Undefined without a scavenge.
 */
export function gcNvp(lines: Iterable<string>, fromMs = 0): YoungGenStats | undefined {
  let scavenges = 0, allocated = 0, promoted = 0, kept = 0, pause = 0, markCompacts = 0;
  for (const line of lines) {
    const m = /\]\s+(\d+) ms: (pause=.*)$/.exec(line);
    if (!m || Number(m[1]) < fromMs) continue;
    const kv = Object.fromEntries(m[2].trim().split(/\s+/).map((x) => x.split('=') as [string, string]));
    if (kv.gc === 's') {
      scavenges++;
      allocated += Number(kv.allocated);
      promoted += Number(kv.promoted);
      kept += Number(kv.new_space_survived);
      pause += Number(kv.pause);
    } else if (kv.gc === 'mc' || kv.gc === 'mmc') markCompacts++;
  }
  if (!scavenges) return undefined;
  return { scavenges, promotedPct: (100 * promoted) / allocated, keptPct: (100 * kept) / allocated, pauseMs: pause / scavenges, markCompacts };
}

/** One reading of a block device's `stat`: I/Os completed so far (reads, writes, discards, flushes) and in flight now. */
export interface DiskSample {
  atMs: number;
  done: number;
  inFlight: number;
}

/**
 * The device's stalls in a series of readings: runs of readings at least `minMs` apart with I/O in flight and
 * none completed meanwhile. A commit's fdatasync waits through such a run, so no durable write to this disk
 * (a confirm's commit) can answer sooner. `ms` is a lower bound: the run's first to last reading.
 */
export function diskStalls(samples: readonly DiskSample[], minMs = 20): Array<{ atMs: number; ms: number }> {
  const out: Array<{ atMs: number; ms: number }> = [];
  let k = -1; // the first reading of the current run
  for (let i = 0; i <= samples.length; i++) {
    const s = samples[i];
    if (s && k >= 0 && s.done === samples[k].done && s.inFlight > 0) continue;
    if (k >= 0) {
      const ms = samples[i - 1].atMs - samples[k].atMs;
      if (ms >= minMs) out.push({ atMs: samples[k].atMs, ms });
    }
    k = s && s.inFlight > 0 ? i : -1;
  }
  return out;
}

/**
 * Reads the block device under Postgres's data directory every `everyMs` (the `stat` file of /sys/dev/block,
 * found from `show data_directory`): the disk's own stalls, beside the answers they delay. Undefined when the
 * directory is not on a local block device this process can see (a remote database, an overlay filesystem).
 */
export class DiskSampler {
  private samples: DiskSample[] = [];
  private timer?: NodeJS.Timeout;
  private constructor(
    readonly device: string,
    private statFile: string,
    private everyMs: number,
  ) {}

  static async forPostgres(sql: postgres.Sql, everyMs = 5): Promise<DiskSampler | undefined> {
    try {
      const [{ data_directory: dir }] = await sql`show data_directory`;
      const dev = statSync(String(dir)).dev;
      const major = Math.floor(dev / 256) & 0xfff;
      const minor = (dev & 0xff) | (Math.floor(dev / 4096) & 0xfff00);
      const statFile = `/sys/dev/block/${major}:${minor}/stat`;
      const sampler = new DiskSampler(basename(realpathSync(`/sys/dev/block/${major}:${minor}`)), statFile, everyMs);
      sampler.read();
      return sampler;
    } catch {
      return undefined;
    }
  }

  private read(): DiskSample {
    const f = readFileSync(this.statFile, 'utf8').trim().split(/\s+/).map(Number);
    // Documentation/block/stat.rst: 1 reads, 5 writes, 9 in flight, 12 discards, 16 flushes completed.
    return { atMs: performance.now(), done: f[0] + f[4] + (f[11] || 0) + (f[15] || 0), inFlight: f[8] };
  }

  start(): this {
    this.samples = [this.read()];
    this.timer = setInterval(() => this.samples.push(this.read()), this.everyMs);
    return this;
  }

  /** The stalls of at least `minMs` since start(), their `atMs` on performance.now()'s clock. */
  stop(minMs = 20): Array<{ atMs: number; ms: number }> {
    clearInterval(this.timer);
    this.samples.push(this.read());
    return diskStalls(this.samples, minMs);
  }
}

export const fmt = (n: number | null | undefined, d = 0) =>
  n === null || n === undefined || !Number.isFinite(n) ? 'n/a' : n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

export function mdTable(head: string[], rows: Array<Array<string | number>>): string {
  const line = (cells: Array<string | number>) => `| ${cells.map(String).join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

/**
 * A window disturbed by processes outside the benchmark (or the hypervisor): more than `limitPct`
 * of a core went to processes outside the categories, plus steal.
 */
export function disturbance(r: CpuReport): number {
  return r.topOthers.reduce((a, x) => a + x.pct, 0) + r.stealPct;
}
export const DISTURBED_PCT = 15;

export function disturbedWhy(r: CpuReport): string {
  const top = r.topOthers.map((x) => `${x.pid} ${(x.cmd || x.comm).slice(0, 60)} ${fmt(x.pct)}%`);
  return `${fmt(disturbance(r))}% of a core: steal ${fmt(r.stealPct)}%${top.length ? `, ${top.join(' | ')}` : ''}`;
}

/** "api main thread: 48% on a CPU, 50% runnable waiting for one, 2% idle" for each name. */
export function mainThreadLine(r: CpuReport, names: string[]): string {
  return names
    .filter((n) => r.mainPct[n] !== undefined)
    .map((n) => {
      // Several processes in the category (--api N): the mean per process, so that it adds up to 100%.
      const k = Math.max(1, r.procs?.[n] ?? 1);
      const on = r.mainPct[n] / k;
      const wait = r.waitPct[n] / k;
      return `${n} main thread${k > 1 ? `s (${k} processes, mean per process)` : ''}: ${fmt(on)}% on a CPU, ${fmt(wait)}% runnable but waiting for one, ${fmt(Math.max(0, 100 - on - wait))}% idle`;
    })
    .join('; ');
}

export function cpuCells(r: CpuReport, names: string[]): string[] {
  const top = r.topOthers.filter((x) => x.pct >= 2).map((x) => `${x.comm} ${fmt(x.pct)}%`);
  // (the JSON keeps each one's pid and command line)
  const other = `${fmt(r.otherPct)}% (irq ${fmt(r.irqPct)}%${top.length ? `; ${top.join(', ')}` : ''})`;
  const cell = (n: string) => `${fmt(r.pct[n] ?? NaN)}%${r.waitPct[n] >= 1 ? ` (+${fmt(r.waitPct[n])}% runq)` : ''}${(r.procs?.[n] ?? 1) > 1 ? ` (${r.procs[n]} procs)` : ''}`;
  return [...names.map(cell), other, `${fmt(r.machineBusyPct)}%`, `${fmt(r.stealPct)}%`];
}

// ---------------------------------------------------------------------------------------------
// V8 CPU profiles
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileRow {
  name: string;
  ms: number;
  pct: number;
}
export interface ProfileSummary {
  file: string;
  windowMs: number;
  sampledMs: number;
  samples: number;
  /** Self time by function (name, file:line). */
  byFunction: ProfileRow[];
  /** Self time by script file. */
  byFile: ProfileRow[];
  /** Self time by owner: app:<dir>, npm:<package>, node:internal, (gc), (program), (idle), (native). */
  byOwner: ProfileRow[];
  /** Inclusive time: samples with at least one frame of that owner on the stack. */
  inclusiveByOwner: ProfileRow[];
  /**
   * Every sample charged to the nearest app or npm frame on its stack (node internals and native
   * code run on behalf of it): "who causes the time", e.g. socket writes charged to postgres.
   */
  attributedByOwner: ProfileRow[];
  /** Inclusive time of the app's own functions (dist/…): a sample counts once for every app function on its stack. */
  inclusiveByAppFunction: ProfileRow[];
  /**
   * attributedByOwner without the socket-write samples, renormalized. A thread that wakes a peer
   * (a Postgres backend) in write() is often preempted right there, so on a saturated machine those
   * samples are mostly run-queue waiting, not CPU (compare perf's kernel share of the process).
   */
  attributedExclWrites: ProfileRow[];
  /** Socket writes (writeBuffer, writev, write*String natives), charged to the nearest app/npm frame. */
  socketWritesBy: ProfileRow[];
  socketWritesMs: number;
}

const SPECIAL = new Set(['(garbage collector)', '(program)', '(idle)', '(root)']);

function shortUrl(url: string): string {
  if (!url) return '';
  let u = url.replace(/^file:\/\//, '');
  const nm = u.lastIndexOf('/node_modules/');
  if (nm >= 0) return u.slice(nm + '/node_modules/'.length);
  const dist = u.indexOf('/dist/');
  if (dist >= 0) return u.slice(dist + '/dist/'.length);
  return u;
}

function ownerOf(fn: string, url: string): string {
  if (SPECIAL.has(fn)) return fn === '(garbage collector)' ? '(gc)' : fn;
  if (!url) return '(native/builtin)';
  if (url.startsWith('node:')) return 'node:internal';
  const u = url.replace(/^file:\/\//, '');
  const nm = u.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = u.slice(nm + '/node_modules/'.length).split('/');
    return `npm:${rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  const dist = u.indexOf('/dist/');
  if (dist >= 0) return `app:${u.slice(dist + '/dist/'.length).split('/')[0]}`;
  return u;
}

/** An app frame as the profile tables name it: `function file:line`. */
const frameName = (cf: ProfileNode['callFrame']) => `${cf.functionName || '(anonymous)'} ${shortUrl(cf.url)}:${cf.lineNumber + 1}`;

/** A .cpuprofile with its nodes by id and each node's parent. */
function readProfile(file: string): { p: CpuProfile; byId: Map<number, ProfileNode>; parent: Map<number, number> } {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of p.nodes) byId.set(n.id, n);
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  return { p, byId, parent };
}

/** Summarizes a .cpuprofile, only counting samples taken between `fromUs` and `toUs` (CLOCK_MONOTONIC µs). */
export function summarizeProfile(file: string, fromUs?: number, toUs?: number, top = 20): ProfileSummary {
  const { p, byId, parent } = readProfile(file);
  const lo = fromUs ?? p.startTime;
  const hi = toUs ?? p.endTime;
  const fnMs = new Map<string, number>();
  const fileMs = new Map<string, number>();
  const ownerMs = new Map<string, number>();
  const inclMs = new Map<string, number>();
  const attrMs = new Map<string, number>();
  const writeMs = new Map<string, number>();
  const appFnMs = new Map<string, number>();
  const attrNoWriteMs = new Map<string, number>();
  let writesTotal = 0;
  let t = p.startTime;
  let total = 0;
  let count = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    if (t < lo || t > hi) continue;
    // The sample's weight: the time until the next sample (the last one: the profile's end).
    const next = i + 1 < p.samples.length ? p.timeDeltas[i + 1] : p.endTime - t;
    const ms = Math.max(0, next) / 1000;
    const node = byId.get(p.samples[i]);
    if (!node) continue;
    const cf = node.callFrame;
    const fn = cf.functionName || '(anonymous)';
    const su = shortUrl(cf.url);
    const fkey = SPECIAL.has(fn) ? fn : `${fn} ${su ? `${su}:${cf.lineNumber + 1}` : '(native)'}`;
    fnMs.set(fkey, (fnMs.get(fkey) ?? 0) + ms);
    const filekey = SPECIAL.has(fn) ? fn : su || '(native/builtin)';
    fileMs.set(filekey, (fileMs.get(filekey) ?? 0) + ms);
    const owner = ownerOf(fn, cf.url);
    ownerMs.set(owner, (ownerMs.get(owner) ?? 0) + ms);
    const owners = new Set<string>();
    const appFns = new Set<string>();
    let nearest: string | undefined;
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const nn = byId.get(id)!;
      if (nn.callFrame.functionName === '(root)') continue;
      const o = ownerOf(nn.callFrame.functionName || '(anonymous)', nn.callFrame.url);
      owners.add(o);
      if (!nearest && (o.startsWith('app:') || o.startsWith('npm:'))) nearest = o;
      if (o.startsWith('app:')) appFns.add(frameName(nn.callFrame));
    }
    for (const f of appFns) appFnMs.set(f, (appFnMs.get(f) ?? 0) + ms);
    for (const o of owners) inclMs.set(o, (inclMs.get(o) ?? 0) + ms);
    const charged = nearest ?? (owner === '(native/builtin)' ? 'node:internal' : owner);
    attrMs.set(charged, (attrMs.get(charged) ?? 0) + ms);
    if (/^(writeBuffer|writev|write(Utf8|Latin1|Ascii|Ucs2)String)$/.test(cf.functionName) && !cf.url) {
      writeMs.set(charged, (writeMs.get(charged) ?? 0) + ms);
      writesTotal += ms;
    } else attrNoWriteMs.set(charged, (attrNoWriteMs.get(charged) ?? 0) + ms);
    total += ms;
    count++;
  }
  const rows = (m: Map<string, number>, n = top): ProfileRow[] =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, ms]) => ({ name, ms: Math.round(ms * 10) / 10, pct: total ? Math.round((1000 * ms) / total) / 10 : 0 }));
  return {
    file,
    windowMs: (hi - lo) / 1000,
    sampledMs: Math.round(total),
    samples: count,
    byFunction: rows(fnMs),
    byFile: rows(fileMs),
    byOwner: rows(ownerMs, 30),
    inclusiveByOwner: rows(inclMs, 30),
    attributedByOwner: rows(attrMs, 30),
    inclusiveByAppFunction: rows(appFnMs, 20),
    attributedExclWrites: [...attrNoWriteMs.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 30)
      .map(([name, ms]) => ({ name, ms: Math.round(ms * 10) / 10, pct: total - writesTotal > 0 ? Math.round((1000 * ms) / (total - writesTotal)) / 10 : 0 })),
    socketWritesBy: rows(writeMs, 10),
    socketWritesMs: Math.round(writesTotal),
  };
}

export function profileTables(s: ProfileSummary, topFunctions = 20): string {
  const t = (title: string, rs: ProfileRow[]) => `${title}\n${mdTable(['', 'ms', '% of sampled'], rs.map((r) => [r.name.replace(/\|/g, '\\|'), fmt(r.ms, 0), `${r.pct.toFixed(1)}%`]))}`;
  return [
    `profile ${s.file}: ${fmt(s.samples)} samples, ${fmt(s.sampledMs)} ms sampled in a ${fmt(s.windowMs)} ms window`,
    t('self time by owner (app dir / npm package / node internals / gc / idle)', s.byOwner),
    t('attributed time: each sample charged to the nearest app/npm frame on its stack (node internals and natives run on its behalf)', s.attributedByOwner.slice(0, 15)),
    t(`socket writes (writeBuffer/writev/write*String natives, ${fmt(s.socketWritesMs)} ms) by the nearest app/npm frame`, s.socketWritesBy),
    t('attributed time without the socket-write samples, in % of the rest (on a saturated machine those are mostly run-queue waits after waking a peer; see perf)', s.attributedExclWrites.slice(0, 15)),
    t('inclusive time by owner (a sample counts once for every owner on its stack)', s.inclusiveByOwner.slice(0, 15)),
    t('inclusive time of the app\'s functions (synchronous parts, and resumptions after await)', s.inclusiveByAppFunction.slice(0, 12)),
    t(`self time by file (top ${Math.min(topFunctions, s.byFile.length)})`, s.byFile.slice(0, topFunctions)),
    t(`self time by function (top ${Math.min(topFunctions, s.byFunction.length)})`, s.byFunction.slice(0, topFunctions)),
  ].join('\n\n');
}

/** A stretch of a profile between two idle samples: the event loop never waited, so every answer due meanwhile waited for it. */
export interface LongTask {
  /** CLOCK_MONOTONIC µs of its first sample (as monoUs()). */
  startUs: number;
  /** Wall time from its first to its last sample: CPU, and the time the process waited for a core meanwhile. */
  ms: number;
  /** What its samples were doing: the nearest app frame (or, without one, the leaf), in % of its samples. */
  top: Array<{ name: string; pct: number }>;
}

/**
 * The profile's busy stretches of at least `minMs` that overlap `fromUs`–`toUs` (one that began just
 * before the window still delays the answers due in it), longest first.
 */
export function longTasks(file: string, minMs = 20, fromUs?: number, toUs?: number, top = 4): LongTask[] {
  const { p, byId, parent } = readProfile(file);
  const lo = fromUs ?? p.startTime;
  const hi = toUs ?? p.endTime;
  const label = (id: number): string => {
    for (let a: number | undefined = id; a !== undefined; a = parent.get(a)) {
      const cf = byId.get(a)!.callFrame;
      if (ownerOf(cf.functionName || '(anonymous)', cf.url).startsWith('app:')) return frameName(cf);
    }
    const cf = byId.get(id)!.callFrame;
    return SPECIAL.has(cf.functionName) ? cf.functionName : `${cf.functionName || '(anonymous)'} (${ownerOf(cf.functionName || '(anonymous)', cf.url)})`;
  };
  const out: LongTask[] = [];
  let cur: { start: number; end: number; ids: number[] } | undefined;
  const close = () => {
    if (cur && (cur.end - cur.start) / 1000 >= minMs && cur.end >= lo && cur.start <= hi) {
      const counts = new Map<string, number>();
      for (const id of cur.ids) {
        const name = label(id);
        counts.set(name, (counts.get(name) ?? 0) + 1);
      }
      const rows = [...counts].sort((a, b) => b[1] - a[1]).slice(0, top).map(([name, c]) => ({ name, pct: Math.round((100 * c) / cur!.ids.length) }));
      out.push({ startUs: cur.start, ms: (cur.end - cur.start) / 1000, top: rows });
    }
    cur = undefined;
  };
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    const id = p.samples[i];
    if (byId.get(id)?.callFrame.functionName === '(idle)') close();
    else {
      cur ??= { start: t, end: t, ids: [] };
      cur.end = t;
      cur.ids.push(id);
    }
  }
  close();
  return out.sort((a, b) => b.ms - a.ms);
}

/** The newest .cpuprofile in `dir` written by process `pid` (node names them CPU.<date>.<time>.<pid>.<tid>.<seq>.cpuprofile). */
export function findProfile(dir: string, pid: number | undefined): string | undefined {
  try {
    const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile') && (pid === undefined || f.split('.')[3] === String(pid)));
    return files.length ? join(dir, files.sort().at(-1)!) : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// perf (system-wide, on-CPU): where the machine's CPU time goes, kernel included. V8 profiles are
// wall-clock samples of one thread; perf's cpu-clock samples count only time on a CPU.
export function perfAvailable(): boolean {
  try {
    return spawnSync('perf', ['--version'], { stdio: 'ignore', timeout: 5000 }).status === 0;
  } catch {
    return false;
  }
}

/** Starts `perf record -e cpu-clock -a` for `seconds` (no call graphs); resolves when perf exits. */
export function perfRecord(seconds: number, out: string, freq = 499): Promise<number | null> {
  return new Promise((resolve) => {
    const p = spawn('perf', ['record', '-e', 'cpu-clock', '-F', String(freq), '-a', '-q', '-o', out, '--', 'sleep', String(seconds)], { stdio: ['ignore', 'ignore', 'pipe'] });
    const onExit = () => p.kill('SIGKILL');
    process.once('exit', onExit);
    p.on('error', () => resolve(null));
    p.on('close', (code) => {
      process.off('exit', onExit);
      resolve(code);
    });
  });
}

export interface PerfSummary {
  samples: string;
  /** By role (named pids; postgres, redis-server by command; the rest by command): % of all samples (2 cores = 100%), and the kernel's part of it. */
  byRole: Array<{ role: string; pct: number; kernelPct: number }>;
  idlePct: number;
  /** Heaviest (process role, shared object, symbol) rows. */
  topSymbols: Array<{ role: string; dso: string; sym: string; pct: number }>;
}

/** Thread ids of a live process (perf attributes samples to threads). */
export function threadsOf(pid: number | undefined): number[] {
  if (!pid) return [];
  try {
    return readdirSync(`/proc/${pid}/task`).map(Number);
  } catch {
    return [];
  }
}

/** role per thread id, for perfSummary: every thread of each named pid (call before the processes exit). */
export function threadRoles(named: Record<string, number | number[] | undefined>): Record<number, string> {
  const out: Record<number, string> = {};
  for (const [role, pids] of Object.entries(named)) for (const pid of pidList(pids)) for (const tid of threadsOf(pid)) out[tid] = role;
  return out;
}

/** node --perf-basic-prof writes /tmp/perf-<pid>.map: remove ours once perf report has read them. */
export function removePerfMaps(pids: Array<number | undefined>): void {
  for (const pid of pids) if (pid) rmSync(`/tmp/perf-${pid}.map`, { force: true });
}

export function perfSummary(file: string, roles: Record<number, string>, top = 25): PerfSummary | undefined {
  const report = (sort: string) =>
    spawnSync('perf', ['report', '-i', file, '--no-children', '--sort', sort, '--stdio', '-q', '--percent-limit', '0.05'], { encoding: 'utf8', maxBuffer: 64 * 2 ** 20, timeout: 120_000 }).stdout ?? '';
  const roleOf = (pid: number, comm: string) => roles[pid] ?? (comm === 'swapper' ? '(idle)' : comm.startsWith('postgres') ? 'postgres' : comm.startsWith('redis') ? 'redis' : comm);
  const byRole = new Map<string, { pct: number; kernelPct: number }>();
  const out1 = report('pid,dso');
  if (!out1.trim()) return undefined;
  for (const line of out1.split('\n')) {
    const m = /^\s*([\d.]+)%\s+(\d+):(\S+)\s+(.+?)\s*$/.exec(line);
    if (!m) continue;
    const r = roleOf(Number(m[2]), m[3]);
    const e = byRole.get(r) ?? { pct: 0, kernelPct: 0 };
    e.pct += Number(m[1]);
    if (m[4].includes('kernel')) e.kernelPct += Number(m[1]);
    byRole.set(r, e);
  }
  const topSymbols: PerfSummary['topSymbols'] = [];
  for (const line of report('pid,dso,sym').split('\n')) {
    const m = /^\s*([\d.]+)%\s+(\d+):(\S+)\s+(\S+)\s+\[[.k]\]\s+(.+?)\s*$/.exec(line);
    if (!m) continue;
    const role = roleOf(Number(m[2]), m[3]);
    if (role === '(idle)') continue;
    topSymbols.push({ role, dso: m[4], sym: m[5].slice(0, 80), pct: Number(m[1]) });
    if (topSymbols.length >= top) break;
  }
  const idle = byRole.get('(idle)')?.pct ?? 0;
  byRole.delete('(idle)');
  const round = (x: number) => Math.round(x * 100) / 100;
  return {
    samples: file,
    byRole: [...byRole.entries()].map(([role, v]) => ({ role, pct: round(v.pct), kernelPct: round(v.kernelPct) })).sort((a, b) => b.pct - a.pct).slice(0, 12),
    idlePct: round(idle),
    topSymbols,
  };
}

export function perfTables(s: PerfSummary): string {
  const busy = s.byRole.reduce((a, r) => a + r.pct, 0);
  return [
    `perf (system-wide cpu-clock samples, 100% = both cores): busy ${fmt(busy, 1)}%, idle ${fmt(s.idlePct, 1)}%`,
    mdTable(['process', '% of machine', 'of which kernel', 'user'], s.byRole.map((r) => [r.role, `${fmt(r.pct, 1)}%`, `${fmt(r.kernelPct, 1)}%`, `${fmt(r.pct - r.kernelPct, 1)}%`])),
    mdTable(['process', 'object', 'symbol', '% of machine'], s.topSymbols.map((r) => [r.role, r.dso, r.sym.replace(/\|/g, '\\|'), `${fmt(r.pct, 2)}%`])),
  ].join('\n\n');
}

// ---------------------------------------------------------------------------------------------
// Postgres evidence of one database during a window (issue 26): the CPU of that database's own
// backends (from /proc, pids from pg_stat_activity; autovacuum, the WAL writer and checkpointer
// are not in it), pg_stat_statements (top statements, WAL bytes; needs the library in
// shared_preload_libraries, else empty), and the PL/pgSQL functions' own time (trigger functions;
// needs track_functions = 'pl').
export interface PgStatement {
  query: string;
  toplevel: boolean;
  calls: number;
  totalMs: number;
  meanMs: number;
  rows: number;
  walBytes: number;
  blksHit: number;
  blksRead: number;
  blksDirtied: number;
  /** Times planned (track_planning on; 0 otherwise) and the planning time. */
  plans: number;
  planMs: number;
}
export interface PgEvidenceReport {
  /** CPU seconds of the database's backends over the window. */
  backendCpuS: number;
  /** Of which in the kernel (system time: sockets, WAL writes and flushes). */
  backendSysS: number;
  /**
   * Transactions that wrote (were given a transaction id) over the window, in the whole cluster:
   * the load's own only on a cluster nobody else uses (the bench's readings write nothing).
   */
  xids: number;
  backends: number;
  statements: PgStatement[];
  /** Top-level statements only (nested ones, from triggers and functions, are inside them): `work`'s. */
  totals: { calls: number; execMs: number; walBytes: number };
  /**
   * Load-independent work of the window (top-level statements, so nested ones are not counted
   * twice): statements, rows, shared buffers hit/read/dirtied/written, WAL records, full-page
   * images and bytes, executing time; plus `nestedCalls`, the statements run inside functions and
   * triggers. The bench's own polls (statements marked `orq-bench`) are left out.
   */
  work: { calls: number; nestedCalls: number; planMs: number; execMs: number; rows: number; blksHit: number; blksRead: number; blksDirtied: number; blksWritten: number; walRecords: number; walFpi: number; walBytes: number };
  functions: Array<{ name: string; calls: number; selfMs: number; totalMs: number }>;
  /** Per table: sequential scans and rows they read, index scans, rows written (the busiest first). */
  tables: Array<{ name: string; seqScan: number; seqRows: number; idxScan: number; writes: number }>;
  available: { statements: boolean; functions: boolean };
}

/** The next transaction id to be assigned (cluster-wide; reading it assigns none). */
async function nextXid(sql: postgres.Sql): Promise<number> {
  const [r] = await sql`select pg_snapshot_xmax(pg_current_snapshot())::text::float8 as x`;
  return r.x as number;
}

export class PgEvidence {
  private cpu = new Map<number, { v0: number; last: number; s0: number; slast: number }>();
  private timer?: NodeJS.Timeout;
  private polling?: Promise<void>;
  private xid0 = 0;
  private constructor(
    private sql: postgres.Sql,
    private db: string,
    private statementsOk: boolean,
  ) {}

  static async start(dbName: string): Promise<PgEvidence> {
    const sql = postgres(dbUrl(dbName), { max: 1, onnotice: () => {}, connect_timeout: 5 });
    let ok = true;
    try {
      await sql`create extension if not exists pg_stat_statements`;
      await sql`select pg_stat_statements_reset(0, (select oid from pg_database where datname = ${dbName}), 0)`;
    } catch {
      ok = false;
    }
    await sql`select pg_stat_reset()`;
    const e = new PgEvidence(sql, dbName, ok);
    e.xid0 = await nextXid(sql);
    await e.poll(true);
    e.timer = setInterval(() => void (e.polling = e.poll(false)), 500);
    return e;
  }

  private async poll(first: boolean) {
    const rows = await this.sql`-- orq-bench
      select pid from pg_stat_activity where datname = ${this.db} and pid <> pg_backend_pid() and application_name <> 'orq-bench'`.catch(() => []);
    for (const r of rows) {
      const pid = Number(r.pid);
      const s = readStat(String(pid), false);
      if (!s) continue;
      const known = this.cpu.get(pid);
      if (known) (known.last = s.cpu), (known.slast = s.sys);
      else this.cpu.set(pid, { v0: first ? s.cpu : 0, last: s.cpu, s0: first ? s.sys : 0, slast: s.sys });
    }
    // Backends seen before but not listed now (exited) keep their last reading.
    for (const [pid, v] of this.cpu) {
      const s = readStat(String(pid), false);
      if (s && s.comm === 'postgres') (v.last = s.cpu), (v.slast = s.sys);
    }
  }

  /** `order`: the statements listed are the top by execution time (default) or by shared buffers hit (load-independent). */
  async stop(top = 15, order: 'time' | 'buffers' = 'time'): Promise<PgEvidenceReport> {
    clearInterval(this.timer);
    await this.polling;
    await this.poll(false);
    let backendCpuS = 0;
    let backendSysS = 0;
    for (const v of this.cpu.values()) (backendCpuS += v.last - v.v0), (backendSysS += v.slast - v.s0);
    let statements: PgStatement[] = [];
    let work = { calls: 0, nestedCalls: 0, planMs: 0, execMs: 0, rows: 0, blksHit: 0, blksRead: 0, blksDirtied: 0, blksWritten: 0, walRecords: 0, walFpi: 0, walBytes: 0 };
    if (this.statementsOk) {
      const [{ oid: dbid }] = await this.sql`select oid::int8::float8 as oid from pg_database where datname = ${this.db}`;
      const rows = await this.sql`
        select query, toplevel, calls::float8 as calls, total_exec_time as total, mean_exec_time as mean, rows::float8 as rows, wal_bytes::float8 as wal,
               shared_blks_hit::float8 as hit, shared_blks_read::float8 as read, shared_blks_dirtied::float8 as dirtied,
               plans::float8 as plans, total_plan_time::float8 as plan
          from pg_stat_statements where dbid = ${dbid} order by case when ${order === 'buffers'} then shared_blks_hit::float8 else total_exec_time end desc limit ${top}`;
      statements = rows.map((r) => ({
        query: String(r.query).replace(/\s+/g, ' ').slice(0, 160),
        toplevel: r.toplevel as boolean,
        calls: r.calls as number,
        totalMs: r.total as number,
        meanMs: r.mean as number,
        rows: r.rows as number,
        walBytes: r.wal as number,
        blksHit: r.hit as number,
        blksRead: r.read as number,
        blksDirtied: r.dirtied as number,
        plans: r.plans as number,
        planMs: r.plan as number,
      }));
      const [w] = await this.sql`select coalesce(sum(calls) filter (where toplevel), 0)::float8 as calls, coalesce(sum(calls) filter (where not toplevel), 0)::float8 as nested,
               coalesce(sum(rows) filter (where toplevel), 0)::float8 as rows, coalesce(sum(total_plan_time), 0)::float8 as planms,
               coalesce(sum(total_exec_time) filter (where toplevel), 0)::float8 as execms,
               coalesce(sum(shared_blks_hit) filter (where toplevel), 0)::float8 as hit, coalesce(sum(shared_blks_read) filter (where toplevel), 0)::float8 as read,
               coalesce(sum(shared_blks_dirtied) filter (where toplevel), 0)::float8 as dirtied, coalesce(sum(shared_blks_written) filter (where toplevel), 0)::float8 as written,
               coalesce(sum(wal_records) filter (where toplevel), 0)::float8 as walrec, coalesce(sum(wal_fpi) filter (where toplevel), 0)::float8 as fpi,
               coalesce(sum(wal_bytes) filter (where toplevel), 0)::float8 as wal
          from pg_stat_statements where dbid = ${dbid} and query not like '%orq-bench%'`;
      work = { calls: w.calls as number, nestedCalls: w.nested as number, planMs: w.planms as number, execMs: w.execms as number, rows: w.rows as number, blksHit: w.hit as number, blksRead: w.read as number, blksDirtied: w.dirtied as number, blksWritten: w.written as number, walRecords: w.walrec as number, walFpi: w.fpi as number, walBytes: w.wal as number };
    }
    const totals = { calls: work.calls, execMs: work.execMs, walBytes: work.walBytes };
    const xids = (await nextXid(this.sql)) - this.xid0;
    const fns = await this.sql`select schemaname || '.' || funcname as name, calls::float8 as calls, self_time as self, total_time as total
        from pg_stat_user_functions order by self_time desc limit ${top}`;
    const tables = await this.sql`select relname as name, seq_scan::float8 as seq, seq_tup_read::float8 as seqrows, coalesce(idx_scan, 0)::float8 as idx,
        (n_tup_ins + n_tup_upd + n_tup_del)::float8 as writes
        from pg_stat_user_tables where seq_scan + coalesce(idx_scan, 0) + n_tup_ins + n_tup_upd > 0 order by seq_tup_read desc, idx_scan desc limit ${top}`;
    await this.sql.end({ timeout: 2 });
    return {
      tables: tables.map((t) => ({ name: t.name as string, seqScan: t.seq as number, seqRows: t.seqrows as number, idxScan: t.idx as number, writes: t.writes as number })),
      backendCpuS,
      backendSysS,
      xids,
      backends: this.cpu.size,
      statements,
      totals,
      work,
      functions: fns.map((f) => ({ name: f.name as string, calls: f.calls as number, selfMs: f.self as number, totalMs: f.total as number })),
      available: { statements: this.statementsOk, functions: fns.length > 0 },
    };
  }
}

/** The evidence as Markdown, per unit of work (`per`: e.g. the payments made in the window). */
export function pgEvidenceTables(e: PgEvidenceReport, per: number, unit: string): string {
  const out: string[] = [];
  out.push(
    `Postgres, this database's ${e.backends} backends: ${fmt((1000 * e.backendCpuS) / per, 2)} ms CPU per ${unit}; ` +
      (e.available.statements
        ? `top-level statements ${fmt(e.totals.calls / per, 1)} per ${unit}, ${fmt(e.totals.execMs / per, 2)} ms executing, WAL ${fmt(e.totals.walBytes / per)} bytes per ${unit}`
        : 'pg_stat_statements not loaded (shared_preload_libraries)'),
  );
  if (e.statements.length)
    out.push(
      mdTable(
        ['statement', 'top', 'calls', `per ${unit}`, 'total ms', 'mean ms', 'rows', 'WAL B/call', 'blks hit/call', 'dirtied/call'],
        e.statements.map((s) => ['`' + s.query.replace(/\|/g, '\\|').replace(/`/g, "'") + '`', s.toplevel ? 'y' : 'n', fmt(s.calls), fmt(s.calls / per, 2), fmt(s.totalMs), fmt(s.meanMs, 3), fmt(s.rows), fmt(s.walBytes / Math.max(1, s.calls)), fmt(s.blksHit / Math.max(1, s.calls), 1), fmt(s.blksDirtied / Math.max(1, s.calls), 2)]),
      ),
    );
  if (e.functions.length)
    out.push(mdTable(['function (PL/pgSQL, triggers)', 'calls', `calls per ${unit}`, 'self ms', `self ms per ${unit}`, 'total ms'], e.functions.map((f) => [f.name, fmt(f.calls), fmt(f.calls / per, 2), fmt(f.selfMs), fmt(f.selfMs / per, 3), fmt(f.totalMs)])));
  if (e.tables.length)
    out.push(mdTable(['table', 'seq scans', 'rows read by seq scans', `seq scans per ${unit}`, 'index scans', `rows written per ${unit}`], e.tables.map((t) => [t.name, fmt(t.seqScan), fmt(t.seqRows), fmt(t.seqScan / per, 2), fmt(t.idxScan), fmt(t.writes / per, 2)])));
  return out.join('\n\n');
}

/**
 * A bench's entry: runs `main`, then always stops its children and runs its cleanups (newest
 * first), also when stdout was closed (`| head`) or main threw; exits with main's code (1 on a throw).
 */
export async function runBench(name: string, main: () => Promise<number>, children: Children, cleanups: Array<() => Promise<unknown>> = []): Promise<never> {
  process.stdout.on('error', () => {});
  let code = 1;
  try {
    code = await main();
  } catch (e) {
    process.stderr.write(`${name} failed: ${(e as Error).stack ?? String(e)}\n`);
    code = 1;
  } finally {
    await children.stopAll();
    for (const c of cleanups.reverse()) await c().catch((e) => process.stderr.write(`cleanup: ${(e as Error).message}\n`));
  }
  process.exit(code);
}
