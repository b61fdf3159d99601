// Where a server's child processes spend their CPU: each ffmpeg and x264 it starts runs through a small bash wrapper
// (WMARK_FFMPEG / WMARK_X264 point at it) that runs the real binary, passes a SIGTERM on to it (a stopped render),
// and appends one line when it ends: the binary, start and end (epoch seconds), the child's user and system seconds
// (bash's `times`), its exit code and its arguments. The lines are classified by what the arguments ask for (the mark
// drawn on a band's rows, a band encode, a whole-picture render, ...). The wrapper's own bash costs a few milliseconds
// a run: it shows as the part of the server's reaped-children CPU that no line accounts for. Parsing and sums are pure.
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface ChildRun {
  bin: 'ffmpeg' | 'x264';
  startS: number;
  endS: number;
  cpuS: number;
  code: number;
  args: string;
}

/** What a child run did, by its arguments. */
export type ChildKind = 'draw' | 'band-encode' | 'full-render' | 'shared-full-render' | 'mp4-join' | 'probe' | 'other-ffmpeg' | 'other-x264';

export const CHILD_KINDS: readonly ChildKind[] = [
  'draw',
  'band-encode',
  'full-render',
  'shared-full-render',
  'mp4-join',
  'probe',
  'other-ffmpeg',
  'other-x264',
];

export function classifyRun(run: Pick<ChildRun, 'bin' | 'args'>): ChildKind {
  const a = run.args;
  if (run.bin === 'x264') return a.includes('--band-self') ? 'band-encode' : 'other-x264';
  if (a.includes('-filter_script:v') && a.includes('yuv4mpegpipe')) return 'draw';
  if (a.includes('libx264')) return /-filter_complex_script|shared-filter/.test(a) ? 'shared-full-render' : 'full-render';
  if (/\.mp4(\s|$)/.test(a) && a.includes('-c copy')) return 'mp4-join';
  if (/(^|\s)-(version|hide_banner -filters|encoders|buildconf)(\s|$)/.test(a) || /-f null/.test(a)) return 'probe';
  return 'other-ffmpeg';
}

/** bash `times` gives "1m2.345s"; seconds. */
function clockSeconds(text: string): number {
  const m = /^(\d+)m([\d.]+)s$/.exec(text.trim());
  if (!m) throw new Error(`not a bash times value: ${text}`);
  return Number(m[1]) * 60 + Number(m[2]);
}

/** Parses the wrapper's log (one tab-separated line per run); a half-written last line is left out. */
export function parseChildLog(text: string): ChildRun[] {
  const out: ChildRun[] = [];
  for (const line of text.split('\n')) {
    const f = line.split('\t');
    if (f.length < 7) continue;
    const [bin, start, end, user, sys, code, ...args] = f;
    if (bin !== 'ffmpeg' && bin !== 'x264') throw new Error(`child log: unknown binary ${bin} in ${line.slice(0, 80)}`);
    out.push({
      bin,
      startS: Number(start),
      endS: Number(end),
      cpuS: clockSeconds(user!) + clockSeconds(sys!),
      code: Number(code),
      args: args.join('\t'),
    });
  }
  return out;
}

export interface KindTotals {
  runs: number;
  /** Runs that did not exit 0 (stopped renders: their CPU is spent for nothing). */
  stopped: number;
  cpuS: number;
  stoppedCpuS: number;
  wallS: number;
}

export function totalsByKind(runs: readonly ChildRun[]): Map<ChildKind, KindTotals> {
  const out = new Map<ChildKind, KindTotals>();
  for (const r of runs) {
    const kind = classifyRun(r);
    const t = out.get(kind) ?? { runs: 0, stopped: 0, cpuS: 0, stoppedCpuS: 0, wallS: 0 };
    t.runs++;
    t.cpuS += r.cpuS;
    t.wallS += r.endS - r.startS;
    if (r.code !== 0) {
      t.stopped++;
      t.stoppedCpuS += r.cpuS;
    }
    out.set(kind, t);
  }
  return out;
}

/**
 * How many of `runs` were running over [fromS, toS], time-weighted: the mean and the share of the window with none
 * and with at least `cores` at once (runs of one thread each fill that many cores).
 */
export function concurrency(
  runs: readonly Pick<ChildRun, 'startS' | 'endS'>[],
  fromS: number,
  toS: number,
  cores: number,
): { mean: number; idleShare: number; fullShare: number } {
  const span = toS - fromS;
  if (!(span > 0)) return { mean: NaN, idleShare: NaN, fullShare: NaN };
  const events = runs
    .flatMap((r) => [
      { t: Math.max(fromS, Math.min(toS, r.startS)), d: 1 },
      { t: Math.max(fromS, Math.min(toS, r.endS)), d: -1 },
    ])
    .sort((a, b) => a.t - b.t || a.d - b.d);
  let level = 0;
  let last = fromS;
  let area = 0;
  let idle = 0;
  let full = 0;
  for (const e of events) {
    const dt = e.t - last;
    area += level * dt;
    if (level === 0) idle += dt;
    if (level >= cores) full += dt;
    level += e.d;
    last = e.t;
  }
  const tail = toS - last;
  area += level * tail;
  if (level === 0) idle += tail;
  if (level >= cores) full += tail;
  return { mean: area / span, idleShare: idle / span, fullShare: full / span };
}

const wrapper = (bin: ChildRun['bin'], real: string, log: string) => `#!/bin/bash
# Runs ${real} and logs its CPU (bench/lib/child-cpu.ts).
start=$EPOCHREALTIME
${JSON.stringify(real)} "$@" <&0 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null' TERM INT
while :; do wait $pid; rc=$?; kill -0 $pid 2>/dev/null || break; done
end=$EPOCHREALTIME
t=${JSON.stringify(log)}.$$
times > "$t"
{ read -r _; read -r cu cs; } < "$t"
printf '%s\\t%s\\t%s\\t%s\\t%s\\t%s\\t%s\\n' ${bin} "$start" "$end" "$cu" "$cs" "$rc" "$*" >> ${JSON.stringify(log)}
exit $rc
`;

/** Writes the wrappers into `dir`; returns the environment that makes wmark use them, and the log they write. */
export async function childCpuWrappers(dir: string, real: { ffmpeg: string; x264: string }): Promise<{ env: NodeJS.ProcessEnv; log: string }> {
  const log = path.join(dir, 'children.log');
  await writeFile(log, '');
  const env: NodeJS.ProcessEnv = {};
  for (const bin of ['ffmpeg', 'x264'] as const) {
    const file = path.join(dir, bin);
    await writeFile(file, wrapper(bin, real[bin], log));
    await chmod(file, 0o755);
    env[bin === 'ffmpeg' ? 'WMARK_FFMPEG' : 'WMARK_X264'] = file;
  }
  return { env, log };
}
