// The band suite's capacity part: how many new real-time viewers one `wmark serve` carries without a stall, with band
// rendering and with whole-picture renders (`WMARK_BAND=off` in serve's environment), on the same title and machine.
//
// A title (the engine's `natural` sample: zooming fractal, film grain, a tone; 25 fps) is ingested once with band
// media by the CLI. Each round starts a fresh serve per render (band, then full; the next round full, then band) and
// climbs a ladder of viewer counts, stopping after the first count with a stall. In a trial, N viewers arrive
// `spacing` seconds apart; each POSTs /2.0/watermark with its own text (a TEXT mark in the bottom band, m3u8 only),
// reads the playlist, fetches segment 0 at once and segment i when its playback reaches segment i-1 (one ahead);
// playback starts a startup allowance after segment 0 has arrived; a segment that arrives after it must play is a
// stall, and playback waits for it (bench/lib/realtime-viewer.ts). One untimed viewer warms each serve up; between
// trials serve goes idle (no ffmpeg or x264 under it) and the machine quiet. serve's /metrics gives the band renders
// and band fallbacks of each ladder.
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { stopProcess } from '../harness/stop-process.js';
import { bandKeys } from '../src/engine/band/band-media.js';
import { dataLayout } from '../src/engine/data-folder/layout.js';
import { metricTotal, type Spread, showSpread, spread } from './lib/band-figures.js';
import { bandX264 } from './lib/band-run.js';
import { fetchOk, sleepUntil, type ViewerResult, watch } from './lib/capacity-viewer.js';
import { childCpuWrappers } from './lib/child-cpu.js';
import { type CpuProfile, profileSplit } from './lib/cpu-profile.js';
import { fail, median, runMeasured, settle, waitForQuiet } from './lib/measure.js';
import { capacityOf, type LadderStep, parseLadder } from './lib/realtime-viewer.js';
import { splitReport, startSplit, type TrialSplit } from './lib/serve-split.js';
import { type Child, startChild, waitForIdle } from './lib/server-process.js';
import { fmt, numberOption, OUT_DIR, type SuiteContext, table, WMARK_BIN, warnIfDistStale, wmarkEnvironment } from './lib/suite.js';
import { type SourceClip, sourceClip } from './lib/video.js';

const FPS = 25;
const KEY = 'band-capacity';
const RENDERS = ['band', 'full'] as const;
type Render = (typeof RENDERS)[number];
/** serve counts as idle after this long without ffmpeg or x264 under it. */
const IDLE_QUIET_MS = 1000;

export interface CapacityOptions {
  heights: number[];
  seconds: number;
  ladder: number[];
  spacingS: number;
  /** Seconds from segment 0's arrival to the start of playback; undefined: segment 0's duration. */
  startupS?: number;
  rounds: number;
  quietWaitMs: number;
  idleMaxMs: number;
  keep: boolean;
  /** Measure where serve's CPU goes in each trial (every count of the ladder runs, stall or not). */
  split: boolean;
  /** The renders measured (band, full or both). */
  renders: Render[];
  /** Folder for a CPU profile of each serve (node --cpu-prof). */
  cpuProf?: string;
}

function parseRenders(text: string): Render[] {
  const list = text.split(',').map((r) => r.trim());
  if (!list.length || !list.every((r): r is Render => (RENDERS as readonly string[]).includes(r)))
    throw new Error(`--capacity-renders: band, full or band,full; got ${text}`);
  return list as Render[];
}

export function capacityOptions(ctx: SuiteContext): CapacityOptions {
  const opt = ctx.args.options;
  const heights = String(opt['capacity-heights'] ?? '720')
    .split(',')
    .map(Number);
  if (!heights.every((h) => Number.isInteger(h) && h >= 144 && h % 2 === 0))
    throw new Error('--capacity-heights: even frame heights of 144 or more, e.g. 720 or 720,1080');
  const seconds = numberOption(opt['capacity-seconds'], 48, 'capacity-seconds');
  if (seconds < 8) throw new Error('--capacity-seconds: 8 or more (the lead segments cover the first 4 s)');
  const rounds = numberOption(opt['capacity-rounds'], 2, 'capacity-rounds');
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--capacity-rounds: a whole number of 1 or more');
  return {
    heights,
    seconds,
    ladder: parseLadder(String(opt['capacity-ladder'] ?? '2,4,6,8,12,15,18,24,30')),
    spacingS: numberOption(opt['capacity-spacing'], 0.75, 'capacity-spacing'),
    startupS: opt['capacity-startup'] === undefined ? undefined : numberOption(opt['capacity-startup'], 0, 'capacity-startup'),
    rounds,
    quietWaitMs: numberOption(opt['quiet-wait'], 10, 'quiet-wait') * 1000,
    idleMaxMs: numberOption(opt['idle-max'], 300, 'idle-max') * 1000,
    keep: ctx.args.keep,
    split: opt['capacity-split'] !== undefined,
    renders: parseRenders(String(opt['capacity-renders'] ?? RENDERS.join(','))),
    ...(typeof opt['capacity-cpu-prof'] === 'string' ? { cpuProf: path.resolve(opt['capacity-cpu-prof']) } : {}),
  };
}

interface Trial {
  round: number;
  render: Render;
  viewers: number;
  results: ViewerResult[];
  stalledViewers: number;
  wallS: number;
  split?: TrialSplit;
}

interface Ladder {
  round: number;
  render: Render;
  trials: Trial[];
  carried: number;
  /** False when no trial stalled: the ladder ended first, so serve carries at least `carried`. */
  complete: boolean;
  /** Time to the first segment at the carried count (over its trial's viewers). */
  firstSegment?: Spread;
  bandRenders: number;
  bandFallbacks: number;
}

export interface HeightCapacity {
  height: number;
  width: number;
  clip: SourceClip;
  segments: number[];
  startupS: number;
  ladders: Ladder[];
}

interface Setup {
  ctx: SuiteContext;
  o: CapacityOptions;
  cwd: string;
  env: NodeJS.ProcessEnv;
  dataDir: string;
  cred: { clientId: string; apiKey: string };
}

/** serve's environment for a render: band rendering as found (the patched x264), or off. */
function envFor(env: NodeJS.ProcessEnv, render: Render): NodeJS.ProcessEnv {
  const out = { ...env };
  if (render === 'full') out.WMARK_BAND = 'off';
  else delete out.WMARK_BAND;
  return out;
}

async function wmark(s: Setup, args: string[]): Promise<string> {
  const m = await runMeasured(process.execPath, [WMARK_BIN, '--data-dir', s.dataDir, '--json', ...args], { cwd: s.cwd, env: envFor(s.env, 'band') });
  if (m.exitCode !== 0) fail(`wmark ${args.slice(0, 2).join(' ')}`, m);
  return m.stdout;
}

async function trial(serve: Child, s: Setup, round: number, render: Render, viewers: number, startupS: number | undefined): Promise<Trial> {
  const t0 = performance.now();
  const tag = Math.random().toString(36).slice(2, 8);
  const results = await Promise.all(
    Array.from({ length: viewers }, async (_, k) => {
      await sleepUntil(t0 + k * s.o.spacingS * 1000);
      return watch(serve.url, { ...s.cred, key: KEY }, `r${round} ${render} ${viewers}/${k + 1} viewer-${tag}${k}@example.com`, startupS);
    }),
  );
  return { round, render, viewers, results, stalledViewers: results.filter((r) => r.stalls > 0 || r.error).length, wallS: (performance.now() - t0) / 1000 };
}

async function metrics(serve: Child): Promise<{ renders: number; fallbacks: number }> {
  const text = await (await fetchOk(`${serve.url}/metrics`)).text();
  return { renders: metricTotal(text, 'wmark_band_renders_total'), fallbacks: metricTotal(text, 'wmark_band_fallbacks_total') };
}

/** Before a trial: serve's earlier rendering is over, dirty pages are written, and the rest of the machine is quiet. */
async function calm(s: Setup, serve: Child): Promise<void> {
  const idle = await waitForIdle(serve.proc.pid!, { quietMs: IDLE_QUIET_MS, maxMs: s.o.idleMaxMs });
  if (!idle.idle) s.ctx.log(`  serve still renders after ${fmt(idle.waitedMs / 1000, 0)} s (${idle.running.join('; ')}); measuring anyway`);
  settle();
  if (s.o.quietWaitMs > 0) await waitForQuiet(0.3, s.o.quietWaitMs, s.ctx.log);
}

const trialLine = (t: Trial) => {
  const first = spread(t.results.map((r) => r.firstSegmentS));
  const stalls = t.results.reduce((a, r) => a + r.stalls, 0);
  const worst = Math.max(0, ...t.results.map((r) => r.worstLatenessS));
  return `${t.viewers} viewers: ${t.stalledViewers} stalled (${stalls} stalls, worst ${fmt(worst)} s late), first segment ${fmt(first.median)} / ${fmt(first.max)} s (median / max)`;
};

const profileName = (render: Render, round: number) => `serve-${render}-r${round}-${process.pid}.cpuprofile`;

/** serve's main thread over its whole life (warm-up viewer included), by part: ms per second of video served. */
async function profileReport(file: string, l: Ladder, titleS: number): Promise<string[]> {
  const split = profileSplit(JSON.parse(await readFile(file, 'utf8')) as CpuProfile);
  const videoS = (1 + l.trials.reduce((a, t) => a + t.viewers, 0)) * titleS;
  const busy = [...split].filter(([part]) => part !== 'idle');
  const total = busy.reduce((a, [, ms]) => a + ms, 0);
  return [
    `serve's main thread (${file}), round ${l.round}, ${l.render}: ${fmt(total / 1000)} s busy for ${fmt(videoS, 0)} s of video`,
    table(
      ['part', 'ms per s of video', 'share %'],
      busy.sort((a, b) => b[1] - a[1]).map(([part, ms]) => [part, ms / videoS, (100 * ms) / total]),
      [undefined, 2, 1],
    ),
  ];
}

/** One serve, one render: the ladder up to its first count with a stall. */
async function ladder(s: Setup, round: number, render: Render, startupS: number | undefined): Promise<Ladder> {
  const logDir = path.join(path.dirname(s.dataDir), `children-${render}-r${round}`);
  if (s.o.split) await mkdir(logDir, { recursive: true });
  const wrapped = s.o.split ? await childCpuWrappers(logDir, { ffmpeg: s.ctx.tools.ffmpeg.path, x264: bandX264(s.ctx, 'band') }) : undefined;
  const prof = s.o.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', s.o.cpuProf, '--cpu-prof-name', profileName(render, round)] : [];
  const serve = await startChild(
    `wmark serve (${render})`,
    process.execPath,
    [...prof, WMARK_BIN, '--data-dir', s.dataDir, '--json', 'serve', '--host', '127.0.0.1', '--port', '0'],
    { cwd: s.cwd, env: { ...envFor(s.env, render), ...wrapped?.env } },
  );
  const trials: Trial[] = [];
  try {
    // An untimed viewer first: the first render of a process pays for its start (font metrics, the first ffmpeg).
    await calm(s, serve);
    const warm = await trial(serve, s, round, render, 1, startupS);
    if (warm.results[0]!.error) throw new Error(`the warm-up viewer failed: ${warm.results[0]!.error}`);
    for (const viewers of s.o.ladder) {
      await calm(s, serve);
      s.ctx.log(`capacity round ${round}, ${render}: ${viewers} viewers ...`);
      const probe = wrapped && (await startSplit(serve.proc.pid!, serve.url, wrapped.log));
      const t = await trial(serve, s, round, render, viewers, startupS);
      if (probe) {
        probe.end();
        await waitForIdle(serve.proc.pid!, { quietMs: IDLE_QUIET_MS, maxMs: s.o.idleMaxMs });
        t.split = await probe.finish(viewers, s.o.seconds);
      }
      trials.push(t);
      s.ctx.log(`  ${trialLine(t)}`);
      if (t.split) for (const line of splitReport(`round ${round}, ${render}`, t.split)) s.ctx.log(line);
      for (const r of t.results) if (r.error) s.ctx.log(`  a viewer failed: ${r.error.slice(0, 400)}`);
      const m = await metrics(serve);
      if (render === 'band' && m.renders === 0)
        throw new Error(
          `no segment got a band render (serve's stderr: ${serve.stderr().slice(-1500)}): the mark does not fit a band, or the title has no band encode`,
        );
      if (render === 'full' && m.renders > 0) throw new Error(`serve with WMARK_BAND=off rendered ${m.renders} segments as bands`);
      if (t.stalledViewers > 0 && !s.o.split) break;
    }
    const m = await metrics(serve);
    const { viewers: carried, complete } = capacityOf(trials.map((t): LadderStep => ({ viewers: t.viewers, stalledViewers: t.stalledViewers })));
    const at = trials.find((t) => t.viewers === carried);
    return {
      round,
      render,
      trials,
      carried,
      complete,
      ...(at ? { firstSegment: spread(at.results.map((r) => r.firstSegmentS)) } : {}),
      bandRenders: m.renders,
      bandFallbacks: m.fallbacks,
    };
  } finally {
    await stopProcess(serve.proc, { graceMs: 8_000 });
  }
}

async function measureHeight(ctx: SuiteContext, o: CapacityOptions, height: number): Promise<HeightCapacity> {
  const width = Math.round((height * 16) / 9 / 2) * 2;
  const clip = await sourceClip(ctx.tools, { width, height, seconds: o.seconds, fps: FPS, audio: true }, ctx.log);
  const runDir = path.join(OUT_DIR, `band-capacity-${height}p`);
  await rm(runDir, { recursive: true, force: true });
  await mkdir(runDir, { recursive: true });
  const { cwd, env } = await wmarkEnvironment(ctx, 'bench-band-capacity-');
  const s: Setup = { ctx, o, cwd, env, dataDir: path.join(runDir, 'data'), cred: { clientId: '', apiKey: '' } };
  try {
    ctx.log(`capacity ${height}p: ingesting the ${o.seconds} s clip with band media ...`);
    const video = JSON.parse(await wmark(s, ['ingest', clip.path, '--key', KEY])) as { id: string };
    if (!existsSync(path.join(dataLayout(s.dataDir).media, bandKeys.meta(video.id))))
      throw new Error('the ingest made no band media: is the patched x264 built (scripts/build-x264.sh) and WMARK_BAND not off?');
    s.cred = JSON.parse(await wmark(s, ['auth', 'keys', 'create'])) as Setup['cred'];
    const ladders: Ladder[] = [];
    for (let round = 1; round <= o.rounds; round++) {
      const order = round % 2 === 1 ? o.renders : [...o.renders].reverse();
      for (const render of order) {
        const l = await ladder(s, round, render, o.startupS);
        ladders.push(l);
        if (o.cpuProf) for (const line of await profileReport(path.join(o.cpuProf, profileName(render, round)), l, o.seconds)) ctx.log(line);
      }
    }
    const segments = ladders.flatMap((l) => l.trials.flatMap((t) => t.results)).find((r) => r.durations.length > 0)?.durations ?? [];
    const startupS = o.startupS ?? segments[0] ?? NaN;
    return { height, width, clip, segments, startupS, ladders };
  } finally {
    await rm(cwd, { recursive: true, force: true });
    if (!o.keep) await rm(runDir, { recursive: true, force: true });
  }
}

export async function measureCapacity(ctx: SuiteContext, o: CapacityOptions): Promise<HeightCapacity[]> {
  warnIfDistStale(ctx.log);
  const out: HeightCapacity[] = [];
  for (const height of o.heights) out.push(await measureHeight(ctx, o, height));
  return out;
}

const carriedText = (l: Ladder) => `${l.carried}${l.complete ? '' : '+'}`;

export function capacityReport(results: HeightCapacity[], o: CapacityOptions): string[] {
  const lines: string[] = [];
  for (const h of results) {
    /** Bytes served per viewer of a trial: trials differ in their viewer counts, so a trial's total compares nothing. */
    const mbPerViewer = (t: Trial) => t.results.reduce((a, r) => a + r.bytes, 0) / 1e6 / Math.max(1, t.results.length);
    lines.push(
      '',
      `capacity at ${h.height}p (${h.width}x${h.height}): one \`wmark serve\`, new real-time viewers without a stall, band rendering against WMARK_BAND=off`,
      `title: ${h.clip.seconds} s natural clip, ${FPS} fps, with audio, ${h.segments.length} segments (${h.segments.map((d) => fmt(d, 1)).join(', ')} s); each viewer POSTs its own TEXT mark in the bottom band (m3u8), viewers arrive ${fmt(o.spacingS)} s apart, fetch one segment ahead, and start playing ${fmt(h.startupS)} s after the first segment arrives${o.startupS === undefined ? " (the first segment's duration)" : ''}; a stall is a segment that arrives after it must play; ladder ${o.ladder.join(',')}, stopping after the first count with a stall; ${o.rounds} rounds, band and full alternating which goes first`,
      table(
        [
          'round',
          'render',
          'viewers',
          'stalled viewers',
          'stalls',
          'stalled s',
          'worst late s',
          'first segment s after the POST: median / max',
          'MB per viewer',
          'wall s',
        ],
        h.ladders.flatMap((l) =>
          l.trials.map((t) => {
            const first = spread(t.results.map((r) => r.firstSegmentS));
            return [
              String(t.round),
              t.render,
              t.viewers,
              t.stalledViewers,
              t.results.reduce((a, r) => a + r.stalls, 0),
              t.results.reduce((a, r) => a + r.stalledS, 0),
              Math.max(0, ...t.results.map((r) => r.worstLatenessS)),
              `${fmt(first.median)} / ${fmt(first.max)}`,
              mbPerViewer(t),
              t.wallS,
            ];
          }),
        ),
        [undefined, undefined, 0, 0, 0, 2, 2, undefined, 1, 1],
      ),
    );
    const byRender = (render: Render) => h.ladders.filter((l) => l.render === render);
    const rounds = [...new Set(h.ladders.map((l) => l.round))];
    const ratios = rounds.map((r) => {
      const carried = (render: Render) => h.ladders.find((l) => l.round === r && l.render === render)?.carried ?? NaN;
      return carried('band') / carried('full');
    });
    const summary = (render: Render): (string | number)[] => {
      const ls = byRender(render);
      const carried = spread(ls.map((l) => l.carried));
      return [
        render,
        ls.map(carriedText).join(', '),
        showSpread(carried, 0),
        ls.map((l) => (l.firstSegment ? `${fmt(l.firstSegment.median)} / ${fmt(l.firstSegment.max)}` : '-')).join(', '),
        ls.reduce((a, l) => a + l.bandRenders, 0),
        ls.reduce((a, l) => a + l.bandFallbacks, 0),
      ];
    };
    lines.push(
      '',
      table(
        [
          'render',
          'carried per round',
          'carried: median (min-max)',
          'first segment s at that count (after the POST), per round: median / max',
          'band renders',
          'band fallbacks (must be 0)',
        ],
        o.renders.map(summary),
        [undefined, undefined, undefined, undefined, 0, 0],
      ),
      `band / full, round by round: ${ratios.map((r) => fmt(r)).join(', ')}; median ${fmt(median(ratios))} (min ${fmt(Math.min(...ratios))}, max ${fmt(Math.max(...ratios))})${h.ladders.some((l) => !l.complete) ? "; N+ = the ladder's top carried without a stall (the capacity is at least N)" : ''}`,
    );
    for (const l of h.ladders) for (const t of l.trials) if (t.split) lines.push(...splitReport(`${h.height}p round ${t.round}, ${t.render}`, t.split));
  }
  return lines;
}
