// Real-browser test support: headless Debian Chromium via playwright-core, hls.js error capture, playback waits, screenshots.
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { type Browser, chromium, type Frame, type Locator, type Page } from 'playwright-core';
import { REPO } from './fixtures.js';
import { FFMPEG } from './tools.js';

const run = promisify(execFile);

const ARTIFACTS = path.join(REPO, 'test-artifacts');
const CHROMIUM = process.env.WMARK_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--autoplay-policy=no-user-gesture-required',
];

/** Headless Chromium; Playwright gives every launch its own throwaway profile (user-data-dir), deleted on close. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

/** One hls.js ERROR event as recorded in the page. */
interface HlsErrorEntry {
  type: string;
  details: string;
  fatal: boolean;
  code?: number;
  url?: string;
  reason?: string;
}

export interface OpenedPage {
  page: Page;
  /** Console errors, page errors and failed requests, for failure messages. */
  log: string[];
  close(): Promise<void>;
}

/**
 * Runs before any page script: when hls.js assigns `window.Hls`, its loadSource/attachMedia are wrapped so every
 * instance reports its ERROR events into `window.__hlsProbe`, whatever the page itself does with them.
 * Plain JS text, so nothing the test transpiler adds (helpers, renamed functions) ends up in the page.
 */
const HLS_PROBE_SCRIPT = `(() => {
  var probe = { instances: 0, fatal: [], nonFatal: [] };
  window.__hlsProbe = probe;
  var seen = new WeakSet();
  var current;
  Object.defineProperty(window, 'Hls', {
    configurable: true,
    enumerable: true,
    get: function () { return current; },
    set: function (Hls) {
      current = Hls;
      if (typeof Hls !== 'function') return;
      function hook(hls) {
        if (seen.has(hls)) return;
        seen.add(hls);
        probe.instances++;
        hls.on(Hls.Events.ERROR, function (_event, d) {
          var entry = {
            type: String(d.type),
            details: String(d.details),
            fatal: Boolean(d.fatal),
            code: d.response ? d.response.code : undefined,
            url: d.url || (d.frag && d.frag.url) || (d.context && d.context.url) || undefined,
            reason: d.reason || (d.error && d.error.message) || undefined
          };
          (entry.fatal ? probe.fatal : probe.nonFatal).push(entry);
        });
      }
      ['loadSource', 'attachMedia'].forEach(function (name) {
        var original = Hls.prototype[name];
        if (typeof original !== 'function') return;
        Hls.prototype[name] = function () {
          hook(this);
          return original.apply(this, arguments);
        };
      });
    }
  });
})();`;

/** A new context (640x360) and page with the hls.js probe installed and problems logged. */
export async function openPage(browser: Browser): Promise<OpenedPage> {
  const context = await browser.newContext({ viewport: { width: 640, height: 360 } });
  await context.addInitScript({ content: HLS_PROBE_SCRIPT });
  const page = await context.newPage();
  const log: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') log.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => log.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => log.push(`requestfailed: ${r.method()} ${r.url()} (${r.failure()?.errorText ?? '?'})`));
  return { page, log, close: () => context.close() };
}

export interface PlaybackState {
  currentTime: number;
  readyState: number;
  paused: boolean;
  /** The element's current source: a `blob:` URL when hls.js (MSE) plays it, the playlist URL for native HLS. */
  src: string;
  mediaError: string | null;
  /** hls.js instances that loaded a source or attached media in this page. */
  hlsInstances: number;
  fatal: HlsErrorEntry[];
  nonFatal: HlsErrorEntry[];
  /** The wmark player's own state (window.wmarkPlayer), when the page is the player. */
  player: { state: string; error: string | null; hlsError: string | null; polls: number } | null;
}

/** Where a video plays: a page, or a frame of one (an embedded player). */
export type PageLike = Page | Frame;

export function playbackState(page: PageLike, selector = 'video'): Promise<PlaybackState> {
  return page.evaluate((sel) => {
    const v = document.querySelector<HTMLVideoElement>(sel);
    const w = window as unknown as {
      __hlsProbe?: { instances: number; fatal: HlsErrorEntry[]; nonFatal: HlsErrorEntry[] };
      wmarkPlayer?: { state: string; error: string | null; hlsError: string | null; polls: number };
    };
    const p = w.wmarkPlayer;
    return {
      currentTime: v ? v.currentTime : -1,
      readyState: v ? v.readyState : -1,
      paused: v ? v.paused : true,
      src: v ? v.currentSrc : '',
      mediaError: v?.error ? `MediaError ${v.error.code}: ${v.error.message}` : null,
      hlsInstances: w.__hlsProbe?.instances ?? 0,
      fatal: w.__hlsProbe?.fatal ?? [],
      nonFatal: w.__hlsProbe?.nonFatal ?? [],
      player: p ? { state: p.state, error: p.error, hlsError: p.hlsError, polls: p.polls } : null,
    };
  }, selector);
}

function describe(state: PlaybackState, log: string[]): string {
  return `${JSON.stringify(state, null, 2)}${log.length ? `\npage log:\n  ${log.join('\n  ')}` : ''}`;
}

/**
 * Waits until the video has played past `minTime` seconds. Fails fast, with the details, on a fatal hls.js error,
 * a media element error or the player's error state, instead of running into the timeout.
 */
export async function waitForPlayback(
  opened: { page: PageLike; log: string[] },
  options: { minTime?: number; timeoutMs?: number; selector?: string } = {},
): Promise<PlaybackState> {
  const { minTime = 1, timeoutMs = 60_000, selector = 'video' } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await playbackState(opened.page, selector);
    if (state.fatal.length) throw new Error(`fatal hls.js error while waiting for currentTime > ${minTime}:\n${describe(state, opened.log)}`);
    if (state.mediaError) throw new Error(`media element error while waiting for currentTime > ${minTime}:\n${describe(state, opened.log)}`);
    if (state.player?.state === 'error')
      throw new Error(`the player shows an error while waiting for currentTime > ${minTime}:\n${describe(state, opened.log)}`);
    if (state.currentTime > minTime) return state;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for currentTime > ${minTime}:\n${describe(state, opened.log)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Waits for a condition evaluated in the page, reporting the playback state on timeout. */
export async function waitForPage(opened: { page: PageLike; log: string[] }, what: string, predicate: () => boolean, timeoutMs = 30_000): Promise<void> {
  try {
    await opened.page.waitForFunction(predicate, undefined, { timeout: timeoutMs, polling: 100 });
  } catch (error) {
    const state = await playbackState(opened.page).catch(() => undefined);
    throw new Error(
      `timed out waiting for ${what}: ${(error as Error).message.split('\n')[0]}\n${state ? describe(state, opened.log) : opened.log.join('\n')}`,
    );
  }
}

/** Saves a PNG screenshot of a page or element under test-artifacts/ and returns its path. */
export async function saveScreenshot(target: Page | Locator, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, name);
  await target.screenshot({ path: file });
  return file;
}

export interface PixelStats {
  mean: number;
  stddev: number;
  /** Distinct 8-bit luma levels: a blank or flat image has very few. */
  levels: number;
}

function statsOf(values: ArrayLike<number>): PixelStats {
  let sum = 0;
  let sq = 0;
  const levels = new Set<number>();
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    sum += v;
    sq += v * v;
    levels.add(Math.round(v));
  }
  const mean = sum / values.length;
  return { mean, stddev: Math.sqrt(Math.max(0, sq / values.length - mean * mean)), levels: levels.size };
}

/** Luma statistics of an image file (decoded and scaled to 160x90 by the bundled ffmpeg). */
export async function imageStats(file: string): Promise<PixelStats> {
  const { stdout } = await run(FFMPEG, ['-v', 'error', '-i', file, '-vf', 'scale=160:90', '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'gray', 'pipe:1'], {
    encoding: 'buffer',
    maxBuffer: 16 * 1024 * 1024,
  });
  if (stdout.length !== 160 * 90) throw new Error(`decoded ${stdout.length} bytes from ${file}, expected ${160 * 90}`);
  return statsOf(stdout);
}

/** Luma statistics of the frame the <video> shows now, drawn into a canvas inside the page. */
export async function videoFrameStats(page: PageLike, selector = 'video'): Promise<PixelStats & { width: number; height: number }> {
  const { luma, width, height } = await page.evaluate((sel) => {
    const v = document.querySelector<HTMLVideoElement>(sel);
    if (!v?.videoWidth) throw new Error(`no decoded video frame in ${sel}`);
    const canvas = document.createElement('canvas');
    canvas.width = v.videoWidth;
    canvas.height = v.videoHeight;
    const ctx = canvas.getContext('2d', { willReadFrequently: true })!;
    ctx.drawImage(v, 0, 0);
    const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
    const out: number[] = [];
    for (let i = 0; i < data.length; i += 4) out.push(0.299 * data[i]! + 0.587 * data[i + 1]! + 0.114 * data[i + 2]!);
    return { luma: out, width: canvas.width, height: canvas.height };
  }, selector);
  return { ...statsOf(luma), width, height };
}
