// Suite `pay`: issue 12, "pay only for what is watched". Every figure of the issue with its target and OK/MISSED, all
// measured in one run on the same machine:
//
//   lead      1a `wmark serve` (warm): POST /2.0/watermark -> READY and a playlist listing a segment
//             1d the same with a logo (an IMAGE setting) beside the text, and its cost against text alone
//             1b the CLI (cold process, --no-wait): spawn -> the playlist file lists a segment
//             1c POST -> the first frame in headless Chromium through the player page (video.currentTime > 0)
//   ondemand  2  a viewer watches the first minute of a 10-minute title: encoded segment-seconds / its duration
//   seek      3  a fresh watermark on the 10-minute title, seek to minute 8: time until playback runs there
//   batch     4  --batch of 8 viewers vs 8 separate jobs (wall ratio); PSNR of a batch output vs its single-job twin
//   full      5  the text suite's complete job vs a plain ffmpeg one-shot; PSNR outside the text area
//   serving   6  the serve suite's signed segment GETs vs a bare node:http handler
//   forensic  7  a new forensic viewer's playlist, timed in a process of its own
//
// `--only lead,seek` runs some of them. See USAGE in bench/run.ts for the options.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { stopProcess } from '../harness/stop-process.js';
import { firstFrameAt, launchBrowser, openViewer, type PageTimeline, pageTimeline, type SeekResult, timedSeek, waitForPlayback } from './lib/browser.js';
import { measureForensicViewer, syntheticViewerSpec } from './lib/forensic-viewer.js';
import { fail, median, runMeasured, settle, waitForQuiet } from './lib/measure.js';
import { encodedSeconds, newPlayableWatermark } from './lib/playlist.js';
import { type Child, startChild, waitForIdle } from './lib/server-process.js';
import {
  fmt,
  formatMachine,
  numberOption,
  OUT_DIR,
  type Suite,
  type SuiteContext,
  table,
  verdict,
  WMARK_BIN,
  warnIfDistStale,
  wmarkEnvironment,
} from './lib/suite.js';
import { mediaDuration, psnr, type SourceClip, sourceClip } from './lib/video.js';
import { measureServing, servingOptions } from './serve.js';
import { textJobPsnr, textJobTable } from './text.js';
import { measureTextJob, PLACEMENT, textJobOptions, wmarkArgs } from './text-job.js';

const PARTS = ['lead', 'ondemand', 'seek', 'batch', 'full', 'serving', 'forensic'] as const;
type Part = (typeof PARTS)[number];

// Targets (issue 12).
const LEAD_SERVE_S = 0.5;
const LEAD_CLI_S = 1.0;
const LEAD_BROWSER_S = 1.5;
const WATCHED_SHARE = 0.2;
const SEEK_S = 2.5;
const BATCH_RATIO = 0.75;
const BATCH_PSNR_DB = 50;
const FULL_RATIO = 0.9;
const SERVING_RATIO = 0.95;
const FORENSIC_US = 50;

const LEAD_KEY = 'pay-lead';
const LONG_KEY = 'pay-long';
const BATCH_KEY = 'pay-batch';
const POLL_MS = 10;
/** Serve counts as idle (its background rendering over) after this long without a child process. */
const IDLE_QUIET_MS = 1000;

/** One figure of the issue: what was measured, against which target. */
interface Figure {
  id: string;
  /** Short, for the summary table. */
  name: string;
  what: string;
  measured: number;
  unit: string;
  target: number;
  /** Targets are upper bounds unless this is set. */
  atLeast?: boolean;
  note?: string;
}

const met = (f: Figure) => (f.atLeast ? f.measured >= f.target : f.measured <= f.target);

interface PartResult {
  part: Part;
  figures: Figure[];
  /** The measurements behind the figures, for the report. */
  lines: string[];
  json: unknown;
}

interface Options {
  only: Set<Part>;
  trials: number;
  rate: number;
  watchS: number;
  longMinutes: number;
  seekTo: number;
  seekTimeoutMs: number;
  idleMaxMs: number;
  viewers: number;
  batchRounds: number;
  batchConcurrency?: number;
  quietWaitMs: number;
}

function parseOptions(ctx: SuiteContext): Options {
  const opt = ctx.args.options;
  const only = typeof opt.only === 'string' ? opt.only.split(',').map((s) => s.trim()) : [...PARTS];
  const unknown = only.filter((p) => !(PARTS as readonly string[]).includes(p));
  if (unknown.length) throw new Error(`--only: unknown part(s) ${unknown.join(', ')}; parts: ${PARTS.join(', ')}`);
  return {
    only: new Set(only as Part[]),
    trials: numberOption(opt.trials, 2 * ctx.args.rounds + 1, 'trials'),
    rate: numberOption(opt.rate, 4, 'rate'),
    watchS: numberOption(opt.watch, 60, 'watch'),
    longMinutes: numberOption(opt['long-minutes'], 10, 'long-minutes'),
    seekTo: numberOption(opt['seek-to'], 480, 'seek-to'),
    seekTimeoutMs: numberOption(opt['seek-timeout'], 30, 'seek-timeout') * 1000,
    idleMaxMs: numberOption(opt['idle-max'], 300, 'idle-max') * 1000,
    viewers: numberOption(opt.viewers, 8, 'viewers'),
    batchRounds: numberOption(opt['batch-rounds'], 1, 'batch-rounds'),
    batchConcurrency: opt['batch-concurrency'] !== undefined ? numberOption(opt['batch-concurrency'], 4, 'batch-concurrency') : undefined,
    quietWaitMs: numberOption(opt['quiet-wait'], 10, 'quiet-wait') * 1000,
  };
}

/** What every part shares: the working folder, how to run wmark, the clips. */
interface Bench {
  ctx: SuiteContext;
  o: Options;
  runDir: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  clip: SourceClip;
  quiet: () => Promise<number>;
}

/** A viewer's unique text: a new watermark every time, never one found in the store. */
const viewerText = (label: string) => `pay ${label} viewer-${randomBytes(4).toString('hex')}@example.com`;

const textSettings = (content: string) => [{ type: 'TEXT', content, ...PLACEMENT }];

/** Runs a wmark command to its end; throws with its output when it fails. */
async function wmark(b: Bench, dataDir: string, args: string[]) {
  const m = await runMeasured(process.execPath, [WMARK_BIN, '--data-dir', dataDir, '--json', ...args], { cwd: b.cwd, env: b.env });
  if (m.exitCode !== 0) fail(`wmark ${args.slice(0, 2).join(' ')}`, m);
  return m;
}

async function ingest(b: Bench, dataDir: string, clip: SourceClip, key: string): Promise<{ id: string; duration: number; segments: number; wallS: number }> {
  b.ctx.log(`ingesting ${path.basename(clip.path)} as ${key} ...`);
  const m = await wmark(b, dataDir, ['ingest', clip.path, '--key', key]);
  const video = JSON.parse(m.stdout) as { id: string; duration: number; segments: number };
  b.ctx.log(`  ${video.segments} segments, ${fmt(m.wallMs / 1000, 1)} s`);
  return { ...video, wallS: m.wallMs / 1000 };
}

// ---------------------------------------------------------------------------------------------------------------
// The served data folder: the 60 s clip (lead) and the 10-minute title (ondemand, seek), one API credential.

interface Served {
  dataDir: string;
  lead: { id: string; duration: number };
  long?: { id: string; duration: number; clip: SourceClip };
  cred: { clientId: string; apiKey: string };
}

async function prepareServed(b: Bench, withLong: boolean): Promise<Served> {
  const dataDir = path.join(b.runDir, 'served');
  const lead = await ingest(b, dataDir, b.clip, LEAD_KEY);
  let long: Served['long'];
  if (withLong) {
    // Cheap to make and to ingest, yet moving: the demo's landscape at 640x360.
    const clip = await sourceClip(b.ctx.tools, { kind: 'scene', width: 640, height: 360, seconds: b.o.longMinutes * 60, fps: 30, audio: true }, b.ctx.log);
    long = { ...(await ingest(b, dataDir, clip, LONG_KEY)), clip };
  }
  const cred = JSON.parse((await wmark(b, dataDir, ['auth', 'keys', 'create'])).stdout) as Served['cred'];
  return { dataDir, lead, long, cred };
}

interface Answer {
  id: string;
  videoId: string;
  status: string;
  containers: { href?: string; m3u8?: string };
}

/** A logo in the top left corner, drawn before (under) the text. */
const logoSetting = (file: string) => ({ type: 'IMAGE', content: file, x: 0.03, y: 0.04, align: 'LEFT', verticalAlign: 'TOP', width: 0.15 });

/** POST /2.0/watermark with one TEXT setting (and a logo), m3u8 only (an mp4 makes any render mode render everything). */
async function postWatermark(serve: Child, served: Served, key: string, text: string, logo?: string): Promise<Answer> {
  const res = await fetch(`${serve.url}/2.0/watermark`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-client-id': served.cred.clientId, 'x-api-key': served.cred.apiKey },
    body: JSON.stringify({ key, settings: [...(logo ? [logoSetting(logo)] : []), ...textSettings(text)], containers: ['m3u8'] }),
  });
  const body = (await res.json()) as Answer;
  if (res.status !== 201 || body.status !== 'READY' || !body.containers.m3u8)
    throw new Error(`POST /2.0/watermark: expected 201 READY with a playlist, got ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** Fetches the signed playlist until it lists a segment (READY promises it does at once; this checks it). */
async function untilPlaylistLists(m3u8: string, timeoutMs: number): Promise<number> {
  const t0 = performance.now();
  for (let fetches = 1; ; fetches++) {
    const res = await fetch(m3u8);
    if (res.ok && (await res.text()).includes('#EXTINF')) return fetches;
    if (performance.now() - t0 > timeoutMs) throw new Error(`playlist ${m3u8} listed no segment within ${timeoutMs} ms (HTTP ${res.status})`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** Before a timed trial: serve's earlier rendering is over and the rest of the machine is quiet. */
async function calm(b: Bench, serve: Child): Promise<void> {
  const idle = await waitForIdle(serve.proc.pid!, { quietMs: IDLE_QUIET_MS, maxMs: b.o.idleMaxMs });
  if (!idle.idle) b.ctx.log(`  serve still renders after ${fmt(idle.waitedMs / 1000, 0)} s (${idle.running.join('; ')}); measuring anyway`);
  settle();
  await b.quiet();
}

const stats = (values: number[]) =>
  `median ${fmt(median(values))} s (min ${fmt(Math.min(...values))}, max ${fmt(Math.max(...values))}; ${values.map((v) => fmt(v)).join(' ')})`;

// ---------------------------------------------------------------------------------------------------------------
// 1b: the CLI, a cold process.

async function leadCli(b: Bench, served: Served): Promise<PartResult> {
  const wmRoot = path.join(served.dataDir, 'media', 'watermarks', served.lead.id);
  const playable: number[] = [];
  const exits: number[] = [];
  const completes: number[] = [];
  for (let t = 1; t <= b.o.trials; t++) {
    const args = wmarkArgs(served.dataDir, viewerText(`cli t${t}`), 'm3u8', LEAD_KEY);
    settle();
    await b.quiet();
    b.ctx.log(`1b CLI trial ${t}/${b.o.trials} ...`);
    const m = await runMeasured(process.execPath, [...args, '--no-wait'], {
      cwd: b.cwd,
      env: b.env,
      poll: { intervalMs: POLL_MS, check: newPlayableWatermark(wmRoot) },
    });
    if (m.exitCode !== 0) fail('wmark watermark --no-wait', m);
    playable.push((m.readyMs ?? NaN) / 1000);
    exits.push(m.wallMs / 1000);
    // The detached worker renders the rest; the same request with waiting follows it to the end, so the next trial
    // starts on a quiet machine.
    const done = await runMeasured(process.execPath, args, { cwd: b.cwd, env: b.env });
    if (done.exitCode !== 0) fail('wmark watermark (waiting for the rest)', done);
    completes.push((m.wallMs + done.wallMs) / 1000);
    b.ctx.log(`  playable after ${fmt(playable.at(-1)!)} s, exit ${fmt(exits.at(-1)!)} s, complete after ~${fmt(completes.at(-1)!)} s`);
  }
  return {
    part: 'lead',
    figures: [
      {
        id: '1b',
        name: 'lead: CLI --no-wait -> playable',
        what: 'CLI cold process (--no-wait): spawn -> playlist file lists a segment, median',
        measured: median(playable),
        unit: 's',
        target: LEAD_CLI_S,
      },
    ],
    lines: [
      `1b CLI: \`wmark watermark --key ${LEAD_KEY} --text <unique> --containers m3u8 --no-wait\`, ${b.o.trials} trials, playlist polled every ${POLL_MS} ms`,
      `   spawn -> playlist lists a segment: ${stats(playable)}`,
      `   spawn -> process exit: ${stats(exits)}; -> every segment rendered (detached worker): ${stats(completes)}`,
    ],
    json: { playableS: playable, exitS: exits, completeS: completes },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// 1a: the serve process, warm; 1d: the same with a logo beside the text (an IMAGE setting drawn in the same pass).

/** A 256x128 PNG logo with graded transparency, like a real one: what 1d draws beside the text. */
function makeLogo(b: Bench): string {
  const file = path.join(b.runDir, 'logo.png');
  const graph = "color=c=black:s=256x128:d=1,format=rgba,geq=r=229:g=57:b=53:a='255*X/W'";
  execFileSync(b.ctx.tools.ffmpeg.path, ['-v', 'error', '-y', '-f', 'lavfi', '-i', graph, '-frames:v', '1', '-pix_fmt', 'rgba', file]);
  return file;
}

/** Timed trials of POST /2.0/watermark after one untimed warm-up: POST -> READY, and POST -> playlist lists a segment. */
async function serveTrials(b: Bench, served: Served, serve: Child, label: string, logo?: string): Promise<{ answers: number[]; playable: number[] }> {
  // Warm-up: the first request pays for the first render path (font metrics, first ffmpeg start, the logo's rendition).
  await calm(b, serve);
  await postWatermark(serve, served, LEAD_KEY, viewerText(`${label} warm-up`), logo);
  const answers: number[] = [];
  const playable: number[] = [];
  for (let t = 1; t <= b.o.trials; t++) {
    await calm(b, serve);
    b.ctx.log(`${label} serve trial ${t}/${b.o.trials} ...`);
    const t0 = performance.now();
    const answer = await postWatermark(serve, served, LEAD_KEY, viewerText(`${label} t${t}`), logo);
    answers.push((performance.now() - t0) / 1000);
    await untilPlaylistLists(answer.containers.m3u8!, 60_000);
    playable.push((performance.now() - t0) / 1000);
    b.ctx.log(`  READY after ${fmt(answers.at(-1)!)} s, playlist lists a segment after ${fmt(playable.at(-1)!)} s`);
  }
  return { answers, playable };
}

async function leadServe(b: Bench, served: Served, serve: Child): Promise<PartResult> {
  const text = await serveTrials(b, served, serve, '1a');
  const withLogo = await serveTrials(b, served, serve, '1d', makeLogo(b));
  const cost = median(withLogo.playable) - median(text.playable);
  return {
    part: 'lead',
    figures: [
      {
        id: '1a',
        name: 'lead: serve POST -> playable',
        what: 'wmark serve (warm): POST /2.0/watermark -> READY, playlist lists a segment, median',
        measured: median(text.playable),
        unit: 's',
        target: LEAD_SERVE_S,
      },
      {
        id: '1d',
        name: 'lead: serve POST text+logo -> playable',
        what: 'wmark serve (warm): POST /2.0/watermark with the text and a 256x128 PNG logo -> playlist lists a segment, median',
        measured: median(withLogo.playable),
        unit: 's',
        target: LEAD_SERVE_S,
      },
    ],
    lines: [
      `1a serve: POST /2.0/watermark (one TEXT setting, unique text, containers m3u8) on the ${b.clip.seconds} s clip, ${b.o.trials} trials after one untimed warm-up; each trial waits for serve's earlier rendering to end`,
      `   POST -> READY answer: ${stats(text.answers)}`,
      `   POST -> signed playlist lists a segment: ${stats(text.playable)}`,
      `1d serve: the same with an IMAGE setting (a 256x128 PNG with alpha, a local file, width 0.15, top left) before the text`,
      `   POST -> READY answer: ${stats(withLogo.answers)}`,
      `   POST -> signed playlist lists a segment: ${stats(withLogo.playable)}`,
      `   the logo's cost: ${cost >= 0 ? '+' : ''}${fmt(cost)} s on the median (${fmt((100 * cost) / median(text.playable), 0)} % of text alone)`,
    ],
    json: { answerS: text.answers, playableS: text.playable, logo: { answerS: withLogo.answers, playableS: withLogo.playable } },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// 1c: POST -> first frame in Chromium, through the player page.

async function leadBrowser(b: Bench, served: Served, serve: Child, browser: Browser): Promise<PartResult> {
  const answers: number[] = [];
  const frames: number[] = [];
  /** Per step of the page's way to its first frame, seconds after the POST, one entry per trial. */
  const steps = new Map<string, number[]>();
  for (let t = 1; t <= b.o.trials; t++) {
    // The browser's new page first, then the quiet wait: a page's processes starting up are not part of the figure.
    const viewer = await openViewer(browser);
    try {
      await calm(b, serve);
      b.ctx.log(`1c browser trial ${t}/${b.o.trials} ...`);
      const t0 = Date.now();
      const answer = await postWatermark(serve, served, LEAD_KEY, viewerText(`browser t${t}`));
      answers.push((Date.now() - t0) / 1000);
      await viewer.page.goto(answer.containers.href!, { waitUntil: 'commit' });
      frames.push(((await firstFrameAt(viewer, 60_000)) - t0) / 1000);
      const line = timelineSteps(await pageTimeline(viewer), t0);
      for (const [name, s] of line) steps.set(name, [...(steps.get(name) ?? []), s]);
      b.ctx.log(`  READY after ${fmt(answers.at(-1)!)} s, first frame after ${fmt(frames.at(-1)!)} s (${line.map(([n, s]) => `${n} ${fmt(s)}`).join(', ')})`);
    } finally {
      await viewer.close();
    }
  }
  return {
    part: 'lead',
    figures: [
      {
        id: '1c',
        name: 'lead: POST -> first frame (Chromium)',
        what: 'POST -> first frame in Chromium via the player page (currentTime > 0), median',
        measured: median(frames),
        unit: 's',
        target: LEAD_BROWSER_S,
      },
    ],
    lines: [
      `1c browser: browser running and a blank page open and settled (fresh context: no cache) before the clock; POST, then the answer's player page (containers.href); ${b.o.trials} trials`,
      `   POST -> READY answer: ${stats(answers)}`,
      `   POST -> first timeupdate with currentTime > 0: ${stats(frames)}`,
      `   the page's way there, median seconds after the POST: ${[...steps].map(([n, v]) => `${n} ${fmt(median(v))}`).join(', ')}`,
    ],
    json: { answerS: answers, firstFrameS: frames, stepsS: Object.fromEntries(steps) },
  };
}

/** The timeline's steps that happened, in the order a page goes through them, as seconds after `t0`. */
function timelineSteps(timeline: PageTimeline, t0: number): [string, number][] {
  const { resources: r, events: e } = timeline;
  const named: [string, number | undefined][] = [
    ['page', r.page],
    ['hls.js', r.hlsJs],
    ['status link', r.href],
    ['playlist', r.playlist],
    ['segment 0 asked', r.segment0Start],
    ['segment 0', r.segment0],
    ['segment 1', r.segment1],
    ['loadedmetadata', e.loadedmetadata],
    ['canplay', e.canplay],
    ['playing', e.playing],
  ];
  return named.filter((x): x is [string, number] => x[1] !== undefined).map(([n, at]) => [n, (at - t0) / 1000]);
}

// ---------------------------------------------------------------------------------------------------------------
// 2: what a viewer of the first minute costs.

async function onDemand(b: Bench, served: Served, serve: Child, browser: Browser): Promise<PartResult> {
  const long = served.long!;
  await calm(b, serve);
  const answer = await postWatermark(serve, served, LONG_KEY, viewerText('watch'));
  const dir = path.join(served.dataDir, 'media', 'watermarks', long.id, answer.id);
  const measure = () => encodedSeconds(dir, (f) => mediaDuration(b.ctx.tools.ffprobe.path, f));
  const viewer = await openViewer(browser, { rate: b.o.rate });
  const t0 = performance.now();
  let watchedS: number;
  try {
    await viewer.page.goto(answer.containers.href!, { waitUntil: 'commit' });
    b.ctx.log(`2 watching the first ${b.o.watchS} s at ${b.o.rate}x ...`);
    await waitForPlayback(viewer, { minTime: b.o.watchS, timeoutMs: (b.o.watchS / b.o.rate) * 1000 + 120_000 });
    watchedS = (performance.now() - t0) / 1000;
  } finally {
    await viewer.close();
  }
  const atStop = await measure();
  b.ctx.log(`  watched in ${fmt(watchedS)} s; ${fmt(atStop.seconds, 0)} s of video encoded when the viewer left; waiting for serve to go idle ...`);
  const idle = await waitForIdle(serve.proc.pid!, { quietMs: IDLE_QUIET_MS, maxMs: b.o.idleMaxMs });
  const settled = await measure();
  const share = settled.seconds / long.duration;
  return {
    part: 'ondemand',
    figures: [
      {
        id: '2',
        name: `on-demand: first ${b.o.watchS} s watched, share encoded`,
        what: `a viewer of the first ${b.o.watchS} s of a ${b.o.longMinutes}-minute title: encoded segment-seconds / duration`,
        measured: share * 100,
        unit: '%',
        target: WATCHED_SHARE * 100,
        note: idle.idle ? undefined : `serve still rendering after ${fmt(idle.waitedMs / 1000, 0)} s`,
      },
    ],
    lines: [
      `2  on-demand: ${long.clip.seconds} s ${long.clip.width}x${long.clip.height} '${long.clip.kind}' title (the demo's landscape: cheap to encode), default render mode of serve, m3u8 only;`,
      `   the player page played it at playbackRate ${b.o.rate} until currentTime >= ${b.o.watchS} (${fmt(watchedS)} s wall), then the page closed`,
      `   encoded when the viewer left: ${fmt(atStop.seconds, 1)} s of ${fmt(long.duration, 1)} s (${atStop.files} segment files, ${fmt((atStop.seconds / long.duration) * 100, 1)} %)`,
      `   encoded once serve went idle (${idle.idle ? `after ${fmt(idle.waitedMs / 1000, 1)} s more` : `NOT idle after ${fmt(idle.waitedMs / 1000, 0)} s`}): ${fmt(settled.seconds, 1)} s (${settled.files} segment files, ${fmt(share * 100, 1)} %)${settled.unlisted.length ? `; ${settled.unlisted.length} files not in the playlist on disk, measured with ffprobe` : ''}`,
      `   (segment-seconds = #EXTINF durations of the seg_*.ts files present in ${path.relative(b.runDir, dir)})`,
    ],
    json: { watermarkId: answer.id, watchedWallS: watchedS, atStop, settled, durationS: long.duration, share, idle },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// 3: seek to minute 8 on a fresh watermark.

async function seek(b: Bench, served: Served, serve: Child, browser: Browser): Promise<PartResult> {
  const long = served.long!;
  await calm(b, serve);
  const answer = await postWatermark(serve, served, LONG_KEY, viewerText('seek'));
  const viewer = await openViewer(browser);
  let result: SeekResult;
  try {
    await viewer.page.goto(answer.containers.href!, { waitUntil: 'commit' });
    await waitForPlayback(viewer, { minTime: 0.5, timeoutMs: 60_000 });
    b.ctx.log(`3 seeking to ${b.o.seekTo} s ...`);
    result = await timedSeek(viewer, b.o.seekTo, b.o.seekTimeoutMs);
  } finally {
    await viewer.close();
  }
  const seconds = result.playingMs / 1000;
  b.ctx.log(
    `  ${Number.isNaN(seconds) ? `no playback at ${b.o.seekTo} s within ${b.o.seekTimeoutMs / 1000} s` : `playing at ${b.o.seekTo} s after ${fmt(seconds)} s`}`,
  );
  return {
    part: 'seek',
    figures: [
      {
        id: '3',
        name: `seek to ${b.o.seekTo} s -> playing`,
        what: `seek to ${b.o.seekTo} s on a fresh watermark of the ${b.o.longMinutes}-minute title: time until playback runs there`,
        measured: Number.isNaN(seconds) ? Infinity : seconds,
        unit: 's',
        target: SEEK_S,
        note: Number.isNaN(seconds) ? `none within ${b.o.seekTimeoutMs / 1000} s` : undefined,
      },
    ],
    lines: [
      `3  seek: a new watermark on the ${long.clip.seconds} s title, played in Chromium until currentTime > 0.5, then currentTime = ${b.o.seekTo}; timed in the page`,
      `   'seeked' after ${fmt(result.seekedMs / 1000)} s; playing at >= ${b.o.seekTo} s (a later timeupdate, currentTime advancing) after ${fmt(seconds)} s`,
      `   at the end: currentTime ${fmt(result.currentTime, 1)}${result.paused ? ' (paused)' : ''}${result.ended ? ' (ended)' : ''}, readyState ${result.readyState}, seekable up to ${fmt(result.seekableEnd, 1)} s, duration ${fmt(result.duration, 1)} s, buffered ${result.bufferedRanges.map(([s, e]) => `${fmt(s, 1)}-${fmt(e, 1)}`).join(', ') || 'nothing'}`,
    ],
    json: { watermarkId: answer.id, ...result },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// 4: a batch of viewers against the same viewers one job at a time.

/** The template both ways use: the viewer's name at PLACEMENT. */
const TEMPLATE = { name: 'pay viewer corner', settings: [{ type: 'TEXT', content: '%name%', ...PLACEMENT }] };

async function batch(b: Bench): Promise<PartResult> {
  // One ingest, copied: separate jobs and the batch render the same viewers (same settings, hence the same watermark
  // ids) into data folders of their own, so neither finds the other's output.
  const base = path.join(b.runDir, 'batch-base');
  await ingest(b, base, b.clip, BATCH_KEY);
  const templateFile = path.join(b.runDir, 'template.json');
  await writeFile(templateFile, JSON.stringify(TEMPLATE));
  const template = JSON.parse((await wmark(b, base, ['template', 'create', templateFile])).stdout) as { id: string };
  const separateDir = path.join(b.runDir, 'batch-separate');
  const batchDir = path.join(b.runDir, 'batch-batch');
  await cp(base, separateDir, { recursive: true });
  await cp(base, batchDir, { recursive: true });
  const common = ['watermark', '--key', BATCH_KEY, '--template', template.id, '--containers', 'm3u8'];
  const rounds: { separateS: number; batchS: number; ratio: number; cpuRatio: number; psnrDb: number; names: string[] }[] = [];
  for (let r = 1; r <= b.o.batchRounds; r++) {
    const names = Array.from({ length: b.o.viewers }, (_, i) => viewerText(`batch r${r} v${i + 1}`));
    const runSeparate = async () => {
      const dirs: string[] = [];
      let wallMs = 0;
      let cpuS = 0;
      for (const name of names) {
        settle();
        const m = await wmark(b, separateDir, [...common, '--map', `name=${name}`]);
        wallMs += m.wallMs;
        cpuS += m.cpuS;
        dirs.push((JSON.parse(m.stdout) as { files: { dir: string } }).files.dir);
      }
      return { wallS: wallMs / 1000, cpuS, dirs };
    };
    const runBatch = async () => {
      const csv = path.join(b.runDir, `batch-r${r}.csv`);
      await writeFile(csv, `name\n${names.map((n) => `"${n}"`).join('\n')}\n`);
      settle();
      const m = await wmark(b, batchDir, [...common, '--batch', csv, ...(b.o.batchConcurrency ? ['--concurrency', String(b.o.batchConcurrency)] : [])]);
      const lines = m.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { status: string; mappings: { name: string }; files: { dir: string } });
      if (lines.length !== names.length || lines.some((l) => l.status !== 'READY'))
        throw new Error(`batch: expected ${names.length} READY lines, got ${m.stdout.slice(0, 2000)}`);
      return { wallS: m.wallMs / 1000, cpuS: m.cpuS, dirs: names.map((n) => lines.find((l) => l.mappings.name === n)!.files.dir) };
    };
    // Alternate which goes first, so drift (other load, page cache) does not favour one.
    await b.quiet();
    b.ctx.log(`4 round ${r}/${b.o.batchRounds}: ${b.o.viewers} separate jobs and one --batch of ${b.o.viewers} ...`);
    let separate: Awaited<ReturnType<typeof runSeparate>>;
    let batched: Awaited<ReturnType<typeof runBatch>>;
    if (r % 2) {
      separate = await runSeparate();
      batched = await runBatch();
    } else {
      batched = await runBatch();
      separate = await runSeparate();
    }
    b.ctx.log(`  separate ${fmt(separate.wallS)} s, batch ${fmt(batched.wallS)} s; PSNR of viewer 1 ...`);
    const full = { x: 0, y: 0, w: b.clip.width, h: b.clip.height };
    const p = await psnr(b.ctx.tools.ffmpeg.path, path.join(batched.dirs[0]!, 'video.m3u8'), path.join(separate.dirs[0]!, 'video.m3u8'), full);
    rounds.push({
      separateS: separate.wallS,
      batchS: batched.wallS,
      ratio: batched.wallS / separate.wallS,
      cpuRatio: batched.cpuS / separate.cpuS,
      psnrDb: p.average,
      names,
    });
  }
  const ratio = median(rounds.map((r) => r.ratio));
  const psnrDb = Math.min(...rounds.map((r) => r.psnrDb));
  return {
    part: 'batch',
    figures: [
      {
        id: '4',
        name: 'batch / separate jobs, wall',
        what: `--batch of ${b.o.viewers} viewers / ${b.o.viewers} separate jobs, wall`,
        measured: ratio,
        unit: 'x',
        target: BATCH_RATIO,
      },
      {
        id: '4',
        name: 'batch vs single job, PSNR',
        what: 'PSNR of a batch output vs the single-job output of the same viewer (viewer 1, all planes)',
        measured: psnrDb,
        unit: 'dB',
        target: BATCH_PSNR_DB,
        atLeast: true,
        note: psnrDb === Infinity ? 'identical' : undefined,
      },
    ],
    lines: [
      `4  batch: \`wmark watermark --template <%name% at the corner> --batch <${b.o.viewers} rows>${b.o.batchConcurrency ? ` --concurrency ${b.o.batchConcurrency}` : ' (default concurrency)'}\` vs ${b.o.viewers} \`--map name=...\` runs one after another, on the ${b.clip.seconds} s clip, m3u8 only`,
      ...rounds.map(
        (r, i) =>
          `   round ${i + 1}: separate ${fmt(r.separateS)} s (sum of ${b.o.viewers} process walls), batch ${fmt(r.batchS)} s: ratio ${fmt(r.ratio)}, CPU time ratio ${fmt(r.cpuRatio)}; PSNR ${r.psnrDb === Infinity ? 'inf (identical)' : `${fmt(r.psnrDb)} dB`}`,
      ),
      `   (the wall ratio also rewards running jobs side by side: ${b.o.viewers} separate jobs pay ${b.o.viewers} process starts and each renders its lead segments one after another; the CPU ratio shows what shared decoding saves)`,
    ],
    json: { templateId: template.id, rounds, ratio, psnrDb },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// 5-7: the existing suites' measurements, against issue 12's targets.

async function fullJob(b: Bench): Promise<PartResult> {
  const r = await measureTextJob(b.ctx, textJobOptions(b.ctx, { runName: 'pay-text-run', quietWaitS: b.o.quietWaitMs / 1000 }));
  const noWorse = r.psnr.wmark.y >= r.psnr.baseline.y;
  return {
    part: 'full',
    figures: [
      {
        id: '5',
        name: 'full job / ffmpeg one-shot, wall',
        what: 'complete TEXT job, wmark / plain ffmpeg one-shot, wall (median of per-round ratios)',
        measured: r.ratio.wall,
        unit: 'x',
        target: FULL_RATIO,
      },
      {
        id: '5',
        name: 'full job PSNR-Y outside text, vs one-shot',
        what: 'PSNR-Y outside the text area, wmark minus one-shot (no worse: >= 0)',
        measured: r.psnr.wmark.y - r.psnr.baseline.y,
        unit: 'dB',
        target: 0,
        atLeast: true,
        note: noWorse ? undefined : 'wmark below the one-shot',
      },
    ],
    lines: [
      `5  full job (the text suite's measurement, ${r.rounds.length} round(s), wmark's default containers):`,
      ...[...textJobTable(r, b.ctx.machine.availableParallelism), ...textJobPsnr(r)].flatMap((l) => l.split('\n')).map((l) => `   ${l}`),
    ],
    json: r,
  };
}

async function serving(b: Bench): Promise<PartResult> {
  const { result: r } = await measureServing(b.ctx, servingOptions(b.ctx, { runName: 'pay-serve-run', durationS: 5, quietWaitS: b.o.quietWaitMs / 1000 }));
  return {
    part: 'serving',
    figures: [
      {
        id: '6',
        name: 'signed GETs / bare node:http',
        what: 'signed segment GETs of wmark serve / a bare node:http handler, req/s',
        measured: r.ratio.getReqPerS,
        unit: 'x',
        target: SERVING_RATIO,
        atLeast: true,
      },
    ],
    lines: [
      `6  serving (the serve suite's measurement: ${r.config.connections} connections, ${r.config.durationS} s per measurement, ${r.rounds.length} round(s)):`,
      ...r.rounds.map(
        (x) =>
          `   round ${x.round}: wmark ${fmt(x.wmarkGet.reqPerS, 0)} req/s, bare ${fmt(x.bareGet.reqPerS, 0)} req/s: ${fmt(x.ratio)}; server CPU ${fmt(x.wmarkGet.serverCpuUsPerReq, 0)} vs ${fmt(x.bareGet.serverCpuUsPerReq, 0)} us/request`,
      ),
    ],
    json: r,
  };
}

async function forensicViewer(): Promise<PartResult> {
  const t = await measureForensicViewer(syntheticViewerSpec(300, 4, 2000));
  return {
    part: 'forensic',
    figures: [
      {
        id: '7',
        name: 'new forensic viewer',
        what: `a new forensic viewer's playlist (${t.segments} segments, its own process), as FORENSIC.md F4`,
        measured: t.playlistUs,
        unit: 'us',
        target: FORENSIC_US,
      },
    ],
    lines: [
      `7  forensic viewer: a synthetic 5-minute title (4 s segments, 2 code slots each, no encode), playlist built 2000 times per repetition in a child process`,
      `   writeMediaPlaylist: median ${fmt(t.playlistUs, 1)} us (repetitions ${t.samplesUs.map((x) => fmt(x, 1)).join(' ')}), ${t.playlistBytes} bytes`,
      `   with the viewer's codeword computed and mapped to variant files: median ${fmt(t.playlistWithCodewordUs, 1)} us (${t.samplesWithCodewordUs.map((x) => fmt(x, 1)).join(' ')})`,
    ],
    json: t,
  };
}

// ---------------------------------------------------------------------------------------------------------------

/** The parts that need `wmark serve` (and the browser), run against one served data folder. */
async function servedParts(b: Bench): Promise<PartResult[]> {
  const { only } = b.o;
  const served = await prepareServed(b, only.has('ondemand') || only.has('seek'));
  const results: PartResult[] = [];
  // The CLI runs before serve starts, so serve's process is not part of its machine.
  if (only.has('lead')) results.push(await leadCli(b, served));
  if (!['lead', 'ondemand', 'seek'].some((p) => only.has(p as Part))) return results;
  const serve = await startChild(
    'wmark serve',
    process.execPath,
    [WMARK_BIN, '--data-dir', served.dataDir, '--json', 'serve', '--host', '127.0.0.1', '--port', '0'],
    { cwd: b.cwd, env: b.env },
  );
  let browser: Browser | undefined;
  try {
    if (only.has('lead')) results.push(await leadServe(b, served, serve));
    browser = await launchBrowser();
    if (only.has('lead')) results.push(await leadBrowser(b, served, serve, browser));
    if (only.has('ondemand')) results.push(await onDemand(b, served, serve, browser));
    if (only.has('seek')) results.push(await seek(b, served, serve, browser));
  } finally {
    await browser?.close();
    await stopProcess(serve.proc, { graceMs: 8_000 });
  }
  return results;
}

function report(b: Bench, results: PartResult[], elapsedS: number): string[] {
  const figures = results.flatMap((r) => r.figures);
  const value = (f: Figure) => (Number.isFinite(f.measured) ? `${fmt(f.measured)} ${f.unit}` : (f.note ?? String(f.measured)));
  return [
    '',
    `== bench pay: issue 12, pay only for what is watched ==`,
    formatMachine(b.ctx.machine),
    `clip:    ${path.relative(process.cwd(), b.clip.path)} (${b.clip.seconds} s ${b.clip.width}x${b.clip.height} ${b.clip.fps} fps, natural, with audio)`,
    '',
    ...results.flatMap((r) => [...r.lines, '']),
    ...figures.map(
      (f) =>
        `${f.id.padEnd(2)} ${f.what}:  ${value(f)}  (target ${f.atLeast ? '>=' : '<='} ${fmt(f.target)} ${f.unit})  ${verdict(met(f))}${f.note && Number.isFinite(f.measured) ? `  [${f.note}]` : ''}`,
    ),
    '',
    table(
      ['figure', 'measured', 'target', 'result'],
      figures.map((f) => [`${f.id.padEnd(2)} ${f.name}`, value(f), `${f.atLeast ? '>=' : '<='} ${fmt(f.target)} ${f.unit}`, verdict(met(f))]),
    ),
    `suite time ${fmt(elapsedS / 60, 1)} min`,
    '',
  ];
}

export const suite: Suite = {
  name: 'pay',
  description: 'issue 12 (pay only for what is watched): lead latency, on-demand cost, seek, shared-decode batch, full job, serving, forensic viewer',
  async run(ctx: SuiteContext) {
    const t0 = performance.now();
    const o = parseOptions(ctx);
    const runDir = path.join(OUT_DIR, 'pay-run');
    await rm(runDir, { recursive: true, force: true });
    await mkdir(runDir, { recursive: true });
    const { cwd, env } = await wmarkEnvironment(ctx, 'bench-pay-cwd-');
    warnIfDistStale(ctx.log);
    const clip = await sourceClip(ctx.tools, { width: 1280, height: 720, seconds: 60, fps: 30, audio: true }, ctx.log);
    const b: Bench = { ctx, o, runDir, cwd, env, clip, quiet: () => (o.quietWaitMs > 0 ? waitForQuiet(0.3, o.quietWaitMs, ctx.log) : Promise.resolve(0)) };
    try {
      const results: PartResult[] = [];
      if (['lead', 'ondemand', 'seek'].some((p) => o.only.has(p as Part))) results.push(...(await servedParts(b)));
      if (o.only.has('batch')) results.push(await batch(b));
      if (o.only.has('full')) results.push(await fullJob(b));
      if (o.only.has('serving')) results.push(await serving(b));
      if (o.only.has('forensic')) results.push(await forensicViewer());
      const elapsedS = (performance.now() - t0) / 1000;
      process.stdout.write(`${report(b, results, elapsedS).join('\n')}\n`);
      return {
        suite: 'pay',
        date: new Date().toISOString(),
        machine: ctx.machine,
        options: { ...o, only: [...o.only] },
        clip,
        figures: results.flatMap((r) => r.figures.map((f) => ({ ...f, met: met(f) }))),
        parts: results.map((r) => ({ part: r.part, ...(r.json as object) })),
        suiteSeconds: elapsedS,
      };
    } finally {
      await rm(cwd, { recursive: true, force: true });
      if (!ctx.args.keep) await rm(runDir, { recursive: true, force: true });
      else ctx.log(`kept working files in ${runDir}`);
    }
  },
};
