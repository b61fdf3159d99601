// A viewer in headless Chromium for suites: the browser the tests use (harness/browser.ts), plus what a bench
// needs on top: the wall-clock moment the first frame advanced, a playback rate, and a timed seek.
import type { Browser } from 'playwright-core';
import { type OpenedPage, openPage, playbackState } from '../../harness/browser.js';

export { launchBrowser, waitForPlayback } from '../../harness/browser.js';

/**
 * Runs before the player's scripts. Media events do not bubble, so a capturing listener on the document sees every
 * <video>: it records Date.now() at the first timeupdate past 0 (the bench's clock is the same wall clock) and sets
 * the playback rate when playback starts.
 */
function probeScript(rate: number): string {
  return `(() => {
  document.addEventListener('timeupdate', (e) => {
    if (window.__benchFirstFrameAt === undefined && e.target.currentTime > 0) window.__benchFirstFrameAt = Date.now();
  }, true);
  document.addEventListener('playing', (e) => { e.target.playbackRate = ${rate}; }, true);
  window.__benchEvents = {};
  for (const name of ['loadedmetadata', 'canplay', 'playing']) {
    document.addEventListener(name, () => { if (window.__benchEvents[name] === undefined) window.__benchEvents[name] = Date.now(); }, true);
  }
})();`;
}

/** A fresh browser context (no cache, like a first visit) with a blank page, ready before any clock starts. */
export async function openViewer(browser: Browser, options: { rate?: number } = {}): Promise<OpenedPage> {
  const opened = await openPage(browser);
  await opened.page.context().addInitScript({ content: probeScript(options.rate ?? 1) });
  await opened.page.goto('about:blank');
  return opened;
}

/** Date.now() in the page when video.currentTime first passed 0; throws with the playback state on timeout. */
export async function firstFrameAt(opened: OpenedPage, timeoutMs: number): Promise<number> {
  try {
    // A function, not a string: the player page's CSP forbids evaluating strings (Playwright passes functions as source).
    const handle = await opened.page.waitForFunction(() => (window as unknown as { __benchFirstFrameAt?: number }).__benchFirstFrameAt, undefined, {
      timeout: timeoutMs,
      polling: 10,
    });
    return (await handle.jsonValue()) as number;
  } catch (error) {
    const state = await playbackState(opened.page).catch(() => undefined);
    throw new Error(`no frame within ${timeoutMs} ms: ${(error as Error).message.split('\n')[0]}\n${JSON.stringify(state)}\n${opened.log.join('\n')}`);
  }
}

export interface SeekResult {
  /** From setting currentTime until 'seeked' (NaN if it never came). */
  seekedMs: number;
  /** From setting currentTime until a timeupdate at or past the target with currentTime advancing (NaN: timed out). */
  playingMs: number;
  /** Where the element was when the wait ended, and what it could reach. */
  currentTime: number;
  paused: boolean;
  ended: boolean;
  readyState: number;
  seekableEnd: number;
  duration: number;
  bufferedRanges: [number, number][];
}

/**
 * In the page: seeks the video to `to` seconds and times how long until playback runs there: 'seeked', then a
 * timeupdate with currentTime >= `to` (less a little slack) later than the one before it. Plain JS text, so nothing the
 * TypeScript transpiler adds (helpers such as __name) ends up in the page.
 */
const SEEK_SCRIPT = `(to, timeoutMs) => new Promise((resolve) => {
  const v = document.querySelector('video');
  const t0 = performance.now();
  let seekedMs = NaN;
  let last = -1;
  const finish = (playingMs) => {
    const ranges = [];
    for (let i = 0; i < v.buffered.length; i++) ranges.push([v.buffered.start(i), v.buffered.end(i)]);
    resolve({ seekedMs, playingMs, currentTime: v.currentTime, paused: v.paused, ended: v.ended, readyState: v.readyState, seekableEnd: v.seekable.length ? v.seekable.end(v.seekable.length - 1) : NaN, duration: v.duration, bufferedRanges: ranges });
  };
  const timer = setTimeout(() => finish(NaN), timeoutMs);
  v.addEventListener('seeked', () => { if (Number.isNaN(seekedMs)) seekedMs = performance.now() - t0; });
  v.addEventListener('timeupdate', () => {
    const t = v.currentTime;
    if (!Number.isNaN(seekedMs) && t >= to - 0.05 && last >= to - 0.05 && t > last) {
      clearTimeout(timer);
      finish(performance.now() - t0);
    }
    last = t;
  });
  v.currentTime = to;
})`;

/** Seeks the page's video to `to` seconds and times, inside the page, until playback runs there (see SEEK_SCRIPT). */
export function timedSeek(opened: OpenedPage, to: number, timeoutMs: number): Promise<SeekResult> {
  return opened.page.evaluate(`(${SEEK_SCRIPT})(${to}, ${timeoutMs})`) as Promise<SeekResult>;
}

/** What the page waited on before its first frame: each step's wall-clock end (Date.now()), where the page saw it. */
export interface PageTimeline {
  /** The player page's HTML, hls.js, the status link (href), the playlist, and the first two segments: response ends. */
  resources: { page?: number; hlsJs?: number; href?: number; playlist?: number; segment0Start?: number; segment0?: number; segment1?: number };
  /** Media events of the <video>, first of each. */
  events: { loadedmetadata?: number; canplay?: number; playing?: number };
}

/** In the page: its resource timings and media events as PageTimeline. Plain JS text, for the reason SEEK_SCRIPT is. */
const TIMELINE_SCRIPT = `(() => {
  const origin = performance.timeOrigin;
  const entries = performance.getEntriesByType('resource');
  const at = (pattern, edge) => {
    const entry = entries.find((e) => pattern.test(new URL(e.name).pathname));
    return entry ? origin + entry[edge || 'responseEnd'] : undefined;
  };
  const nav = performance.getEntriesByType('navigation')[0];
  return {
    resources: {
      page: nav ? origin + nav.responseEnd : undefined,
      hlsJs: at(/hls[.a-z]*[.]js$/),
      href: at(/^[/](1[.]0|2[.]0)[/]watermark[/][^.]*$/),
      playlist: at(/[.]m3u8$/),
      segment0Start: at(/seg_00000[.]ts$/, 'startTime'),
      segment0: at(/seg_00000[.]ts$/),
      segment1: at(/seg_00001[.]ts$/),
    },
    events: window.__benchEvents || {},
  };
})()`;

/** Reads the page's resource timings and media events once its first frame has shown. */
export function pageTimeline(opened: OpenedPage): Promise<PageTimeline> {
  return opened.page.evaluate(TIMELINE_SCRIPT) as Promise<PageTimeline>;
}
