import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fail, median, runMeasured, settle } from './lib/measure.js';
import { type Child, waitForIdle } from './lib/server-process.js';
import { fmt, numberOption, type SuiteContext, WMARK_BIN } from './lib/suite.js';
import type { SuiteBench } from './lib/suite-bench.js';
import { type SourceClip, sourceClip } from './lib/video.js';
import { PLACEMENT } from './text-job.js';

const PARTS = ['lead', 'ondemand', 'seek', 'batch', 'full', 'serving', 'forensic'] as const;
export type Part = (typeof PARTS)[number];

// Targets: the lead plays within these, from the POST (serve), the command's start (CLI) and the page's load (browser).
export const LEAD_SERVE_S = 0.5;
export const LEAD_CLI_S = 1.0;
export const LEAD_BROWSER_S = 1.5;
export const WATCHED_SHARE = 0.2;
export const SEEK_S = 2.5;
export const BATCH_RATIO = 0.75;
export const BATCH_PSNR_DB = 50;
export const FULL_RATIO = 0.9;
export const SERVING_RATIO = 0.95;
export const FORENSIC_US = 50;

export const LEAD_KEY = 'pay-lead';
export const LONG_KEY = 'pay-long';
export const BATCH_KEY = 'pay-batch';
export const POLL_MS = 10;
/** Serve counts as idle (its background rendering over) after this long without a child process. */
export const IDLE_QUIET_MS = 1000;

/** One figure of the issue: what was measured, against which target. */
export interface Figure {
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

export const met = (f: Figure) => (f.atLeast ? f.measured >= f.target : f.measured <= f.target);

export interface PartResult {
  part: Part;
  figures: Figure[];
  /** The measurements behind the figures, for the report. */
  lines: string[];
  json: unknown;
}

export interface Options {
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

export function parseOptions(ctx: SuiteContext): Options {
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

/** What every part shares: the working folder, how to run wmark, the clip, and a wait for a quiet machine. */
export interface Bench extends SuiteBench<Options> {
  quiet: () => Promise<number>;
}

/** A viewer's unique text: a new watermark every time, never one found in the store. */
export const viewerText = (label: string) => `pay ${label} viewer-${randomBytes(4).toString('hex')}@example.com`;

const textSettings = (content: string) => [{ type: 'TEXT', content, ...PLACEMENT }];

/** Runs a wmark command to its end; throws with its output when it fails. */
export async function wmark(b: Bench, dataDir: string, args: string[]) {
  const m = await runMeasured(process.execPath, [WMARK_BIN, '--data-dir', dataDir, '--json', ...args], { cwd: b.cwd, env: b.env });
  if (m.exitCode !== 0) fail(`wmark ${args.slice(0, 2).join(' ')}`, m);
  return m;
}

export async function ingest(
  b: Bench,
  dataDir: string,
  clip: SourceClip,
  key: string,
): Promise<{ id: string; duration: number; segments: number; wallS: number }> {
  b.ctx.log(`ingesting ${path.basename(clip.path)} as ${key} ...`);
  const m = await wmark(b, dataDir, ['ingest', clip.path, '--key', key]);
  const video = JSON.parse(m.stdout) as { id: string; duration: number; segments: number };
  b.ctx.log(`  ${video.segments} segments, ${fmt(m.wallMs / 1000, 1)} s`);
  return { ...video, wallS: m.wallMs / 1000 };
}

// ---------------------------------------------------------------------------------------------------------------
// The served data folder: the 60 s clip (lead) and the 10-minute title (ondemand, seek), one API credential.

export interface Served {
  dataDir: string;
  lead: { id: string; duration: number };
  long?: { id: string; duration: number; clip: SourceClip };
  cred: { clientId: string; apiKey: string };
}

export async function prepareServed(b: Bench, withLong: boolean): Promise<Served> {
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

export interface Answer {
  id: string;
  videoId: string;
  status: string;
  containers: { href?: string; m3u8?: string };
}

/** A logo in the top left corner, drawn before (under) the text. */
const logoSetting = (file: string) => ({ type: 'IMAGE', content: file, x: 0.03, y: 0.04, align: 'LEFT', verticalAlign: 'TOP', width: 0.15 });

/** POST /2.0/watermark with one TEXT setting (and a logo), m3u8 only (an mp4 makes any render mode render everything). */
export async function postWatermark(serve: Child, served: Served, key: string, text: string, logo?: string): Promise<Answer> {
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
export async function untilPlaylistLists(m3u8: string, timeoutMs: number): Promise<number> {
  const t0 = performance.now();
  for (let fetches = 1; ; fetches++) {
    const res = await fetch(m3u8);
    if (res.ok && (await res.text()).includes('#EXTINF')) return fetches;
    if (performance.now() - t0 > timeoutMs) throw new Error(`playlist ${m3u8} listed no segment within ${timeoutMs} ms (HTTP ${res.status})`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** Before a timed trial: serve's earlier rendering is over and the rest of the machine is quiet. */
export async function calm(b: Bench, serve: Child): Promise<void> {
  const idle = await waitForIdle(serve.proc.pid!, { quietMs: IDLE_QUIET_MS, maxMs: b.o.idleMaxMs });
  if (!idle.idle) b.ctx.log(`  serve still renders after ${fmt(idle.waitedMs / 1000, 0)} s (${idle.running.join('; ')}); measuring anyway`);
  settle();
  await b.quiet();
}

export const stats = (values: number[]) =>
  `median ${fmt(median(values))} s (min ${fmt(Math.min(...values))}, max ${fmt(Math.max(...values))}; ${values.map((v) => fmt(v)).join(' ')})`;
