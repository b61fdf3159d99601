// `npm run bench -- start`: how long the CLI takes to start, as a whole process: `wmark --version` and `wmark --help`
// against `node -e 0` (Node's own start on this machine), each run --runs times, in turns (A B A B) so a change in the
// machine's load falls on every command alike; and how many ES modules each loads. With --against DIR, the
// same commands of another checkout's bin/wmark.js (say, main's) run in the same turns, and each pair's ratio is
// reported: on a busy machine the ratio says more than either figure.
//
// The third start figure, a cold `wmark watermark --no-wait` to a playable playlist, is the pay suite's 1b
// (`npm run bench -- pay --only lead`, on its 60 s 720p clip). With --no-wait-pairs N, this suite also measures it
// A B A B against --against's checkout, on a small generated clip (640x360, 12 s) each ingests into a data folder of
// its own: each run is followed to its end before the next starts, so no render of one overlaps the other's start.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fail, runMeasured } from './lib/measure.js';
import { newPlayableWatermark } from './lib/playlist.js';
import { fmt, numberOption, type Suite, type SuiteContext, table, verdict, WMARK_BIN, warnIfDistStale, wmarkEnvironment } from './lib/suite.js';
import { sourceClip } from './lib/video.js';

/** Targets on a quiet machine, whole process, seconds. */
const TARGETS: Record<string, number> = { '--version': 0.15, '--help': 0.2 };

/** A loader hook, in the measured process, that names every module Node loads (on stderr, one a line). */
const COUNT_HOOK = `data:text/javascript,${encodeURIComponent(
  "import { register } from 'node:module'; register('data:text/javascript,' + encodeURIComponent('export async function load(u, c, n) { process.stderr.write(\"wmark-bench-loaded \" + u + \"\\\\n\"); return n(u, c); }'));",
)}`;

interface Command {
  label: string;
  args: string[];
}

function timeOnce(args: string[], cwd: string, env: NodeJS.ProcessEnv): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const s = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return s;
}

/** The modules one run loads, by kind: wmark's own files, packages, Node's built-ins. */
export function countModules(lines: string[]): { total: number; own: number; packages: number; builtin: number } {
  const urls = lines.filter((l) => l.startsWith('wmark-bench-loaded ')).map((l) => l.slice('wmark-bench-loaded '.length));
  const builtin = urls.filter((u) => u.startsWith('node:')).length;
  const packages = urls.filter((u) => u.includes('/node_modules/')).length;
  return { total: urls.length, own: urls.length - builtin - packages, packages, builtin };
}

const quantiles = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  return { min: s[0]!, median: s[Math.floor((s.length - 1) / 2)]!, max: s.at(-1)! };
};

/** Cold `wmark watermark --no-wait` runs, A B A B, each bin on its own data folder: spawn -> playlist lists a segment. */
async function noWaitPairs(ctx: SuiteContext, bins: [string, string][], pairs: number, cwd: string, env: NodeJS.ProcessEnv) {
  const clip = await sourceClip(ctx.tools, { width: 640, height: 360, seconds: 12, fps: 30 }, ctx.log);
  const root = mkdtempSync(path.join(os.tmpdir(), 'wmark-bench-nowait-'));
  try {
    const folders = bins.map(([who, bin]) => {
      const dataDir = path.join(root, who);
      const r = spawnSync(process.execPath, [bin, '--data-dir', dataDir, '--json', 'ingest', clip.path, '--key', 'start'], { cwd, env, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`${who}: wmark ingest exited ${r.status}: ${r.stderr}`);
      return { who, bin, dataDir, videoId: (JSON.parse(r.stdout) as { id: string }).id };
    });
    const playable = new Map(bins.map(([who]) => [who, [] as number[]]));
    for (let i = 0; i < pairs; i++) {
      for (const f of folders) {
        const args = [f.bin, '--data-dir', f.dataDir, '--json', 'watermark', '--key', 'start', '--text', `start ${f.who} ${i}`, '--containers', 'm3u8'];
        const check = newPlayableWatermark(path.join(f.dataDir, 'media', 'watermarks', f.videoId));
        const m = await runMeasured(process.execPath, [...args, '--no-wait'], { cwd, env, poll: { intervalMs: 10, check } });
        if (m.exitCode !== 0 || m.readyMs === undefined) fail(`${f.who}: wmark watermark --no-wait`, m);
        playable.get(f.who)!.push(m.readyMs / 1000);
        // The detached render finishes before the next cold start.
        const done = await runMeasured(process.execPath, args, { cwd, env });
        if (done.exitCode !== 0) fail(`${f.who}: wmark watermark (following to the end)`, done);
      }
      ctx.log(`no-wait pair ${i + 1}/${pairs}`);
    }
    return playable;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

export const suite: Suite = {
  name: 'start',
  description: 'CLI start: whole-process --version and --help (A B A B against node -e 0, and another checkout with --against DIR), modules loaded',
  async run(ctx: SuiteContext) {
    const opt = ctx.args.options;
    const runs = numberOption(opt.runs, 15, 'runs');
    const against = typeof opt.against === 'string' ? path.resolve(opt.against, 'bin', 'wmark.js') : undefined;
    if (against && !existsSync(against)) throw new Error(`--against: ${against} does not exist`);
    warnIfDistStale(ctx.log);
    const { cwd, env } = await wmarkEnvironment(ctx, 'wmark-bench-start-');
    const bins: [string, string][] = [['this', WMARK_BIN], ...(against ? [['against', against] as [string, string]] : [])];
    const commands: Command[] = [
      { label: 'node -e 0', args: ['-e', '0'] },
      ...bins.flatMap(([who, bin]) => [
        { label: `${who}: wmark --version`, args: [bin, '--version'] },
        { label: `${who}: wmark --help`, args: [bin, '--help'] },
      ]),
    ];
    const times = new Map(commands.map((c) => [c.label, [] as number[]]));
    // One untimed turn first: the file cache is warm for every command alike.
    for (const c of commands) timeOnce(c.args, cwd, env);
    for (let i = 0; i < runs; i++) {
      for (const c of commands) times.get(c.label)!.push(timeOnce(c.args, cwd, env));
      ctx.log(`turn ${i + 1}/${runs}`);
    }
    const rows = commands.map((c) => {
      const q = quantiles(times.get(c.label)!);
      const target = TARGETS[c.args.at(-1)!];
      return [c.label, q.min, q.median, q.max, target ?? '-', target === undefined || c.label.startsWith('against') ? '-' : verdict(q.median <= target)];
    });
    const noWaitRuns = numberOption(opt['no-wait-pairs'], 0, 'no-wait-pairs');
    const noWait = noWaitRuns > 0 ? await noWaitPairs(ctx, bins, noWaitRuns, cwd, env) : undefined;
    if (noWait) {
      for (const [who, values] of noWait) {
        const q = quantiles(values);
        rows.push([`${who}: watermark --no-wait -> playable (640x360)`, q.min, q.median, q.max, '-', '-']);
      }
    }
    const modules = bins.flatMap(([who, bin]) =>
      ['--version', '--help'].map((cmd) => {
        const r = spawnSync(process.execPath, ['--import', COUNT_HOOK, bin, cmd], { cwd, env, encoding: 'utf8' });
        return { who: `${who}: wmark ${cmd}`, ...countModules(r.stderr.split('\n')) };
      }),
    );
    const pairsOf = (a: number[], b: number[]) => quantiles(a.map((t, i) => t / b[i]!));
    const ratios = against
      ? [
          ...['--version', '--help'].map((cmd) => ({ cmd, ...pairsOf(times.get(`this: wmark ${cmd}`)!, times.get(`against: wmark ${cmd}`)!) })),
          ...(noWait ? [{ cmd: 'watermark --no-wait', ...pairsOf(noWait.get('this')!, noWait.get('against')!) }] : []),
        ]
      : [];
    const lines = [
      `CLI start, whole process, ${runs} turns (A B A B), seconds; the machine's load shows in node -e 0`,
      table(['command', 'min', 'median', 'max', 'target', ''], rows),
      '',
      table(
        ['modules loaded', 'total', 'wmark', 'packages', 'node:'],
        modules.map((m) => [m.who, m.total, m.own, m.packages, m.builtin]),
        [undefined, 0, 0, 0, 0],
      ),
      ...(ratios.length
        ? [
            '',
            table(
              ['this / against, pair by pair', 'min', 'median', 'max'],
              ratios.map((r) => [`wmark ${r.cmd}`, r.min, r.median, r.max]),
            ),
          ]
        : []),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    return {
      runs,
      seconds: Object.fromEntries(times),
      noWaitPlayableS: noWait ? Object.fromEntries(noWait) : undefined,
      modules,
      ratios,
      summary: rows.map((r) => `${r[0]}: median ${fmt(r[2] as number)} s`),
    };
  },
};
