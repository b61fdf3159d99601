// Runs a command and measures its memory as well as its time: wall, CPU (user + sys of the whole tree, from GNU time
// when it is there), the largest single process' peak RSS (GNU time's %M), and the peak of the whole process tree's
// RSS summed (wmark and the ffmpeg it streams from, tsx's esbuild service), sampled from /proc.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { exitOf, gnuTimed, hasGnuTime, readGnuTime } from './measure.js';
import { descendants, parseStat, readProcessTable } from './process-cpu.js';

const PAGE = 4096;

export interface TreeMeasured {
  wallMs: number;
  userS: number;
  sysS: number;
  cpuS: number;
  exitCode: number;
  stdout: string;
  stderr: string;
  /** Largest peak RSS of any one process of the tree (GNU time's maximum resident set size), bytes; NaN without GNU time. */
  peakProcessRss: number;
  /** Peak of the tree's summed RSS, sampled every `sampleMs` (a short spike between samples can be missed). */
  peakTreeRss: number;
  /** The biggest process' name at the tree's peak, and its RSS then. */
  peakTreeTop: { name: string; rss: number };
  samples: number;
  cpuSource: 'gnu-time' | 'proc';
}

/** RSS (bytes) of `root` and all its descendants now, and the largest one. */
function treeRss(root: number): { total: number; top: { name: string; rss: number } } {
  let total = 0;
  let top = { name: '', rss: 0 };
  for (const { pid, name } of descendants(readProcessTable(), root)) {
    try {
      const rss = Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * PAGE;
      total += rss;
      if (rss > top.rss) top = { name, rss };
    } catch {
      /* gone meanwhile */
    }
  }
  return { total, top };
}

export async function runTreeMeasured(
  cmd: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; sampleMs?: number } = {},
): Promise<TreeMeasured> {
  const gnu = await hasGnuTime();
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'bench-tree-'));
  const timeFile = path.join(tmp, 'time');
  const [bin, argv] = gnu ? gnuTimed(timeFile, cmd, args) : [cmd, [...args]];
  try {
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    const t0 = performance.now();
    const child = spawn(bin, argv, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d: Buffer) => stdout.push(d));
    child.stderr.on('data', (d: Buffer) => stderr.push(d));
    let peakTreeRss = 0,
      samples = 0;
    let peakTreeTop = { name: '', rss: 0 };
    let cpuTicks = 0;
    const sample = () => {
      if (child.pid === undefined) return;
      const { total, top } = treeRss(child.pid);
      samples++;
      if (total > peakTreeRss) {
        peakTreeRss = total;
        peakTreeTop = top;
      }
      if (!gnu) {
        // Without GNU time: the tree's own CPU, as last seen (utime + stime + children's, in clock ticks).
        try {
          const f = parseStat(readFileSync(`/proc/${child.pid}/stat`, 'utf8'));
          cpuTicks = Math.max(cpuTicks, f.utime + f.stime + f.cutime + f.cstime);
        } catch {
          /* ended */
        }
      }
    };
    const timer = setInterval(sample, options.sampleMs ?? 100);
    const exitCode = await exitOf(child);
    clearInterval(timer);
    const wallMs = performance.now() - t0;
    let userS = NaN,
      sysS = NaN,
      peakProcessRss = NaN;
    if (gnu) {
      const t = await readGnuTime(timeFile);
      if (t) ({ userS, sysS, maxRss: peakProcessRss } = t);
    } else {
      userS = cpuTicks / 100;
      sysS = 0;
    }
    return {
      wallMs,
      userS,
      sysS,
      cpuS: userS + sysS,
      exitCode,
      stdout: Buffer.concat(stdout).toString('utf8'),
      stderr: Buffer.concat(stderr).toString('utf8'),
      peakProcessRss,
      peakTreeRss,
      peakTreeTop,
      samples,
      cpuSource: gnu ? 'gnu-time' : 'proc',
    };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
