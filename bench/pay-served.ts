// The pay suite's parts that need `wmark serve` (and the browser): the lead latencies (1a-1d, the CLI's 1b before serve
// starts), the on-demand viewer (2) and the seek (3), against one served data folder.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { stopProcess } from '../harness/stop-process.js';
import { firstFrameAt, launchBrowser, openViewer, type PageTimeline, pageTimeline, type SeekResult, timedSeek, waitForPlayback } from './lib/browser.js';
import { FFMPEG_QUIET } from './lib/ffmpeg-args.js';
import { fail, median, runMeasured, settle } from './lib/measure.js';
import { encodedSeconds, newPlayableWatermark } from './lib/playlist.js';
import { type Child, startChild, waitForIdle } from './lib/server-process.js';
import { fmt, WMARK_BIN } from './lib/suite.js';
import { mediaDuration } from './lib/video.js';
import {
  type Bench,
  calm,
  IDLE_QUIET_MS,
  LEAD_BROWSER_S,
  LEAD_CLI_S,
  LEAD_KEY,
  LEAD_SERVE_S,
  LONG_KEY,
  type Part,
  type PartResult,
  POLL_MS,
  postWatermark,
  prepareServed,
  SEEK_S,
  type Served,
  stats,
  untilPlaylistLists,
  viewerText,
  WATCHED_SHARE,
} from './pay-common.js';
import { wmarkArgs } from './text-job.js';

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
  execFileSync(b.ctx.tools.ffmpeg.path, [...FFMPEG_QUIET, '-f', 'lavfi', '-i', graph, '-frames:v', '1', '-pix_fmt', 'rgba', file]);
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

/** The parts that need `wmark serve` (and the browser), run against one served data folder. */
export async function servedParts(b: Bench): Promise<PartResult[]> {
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
