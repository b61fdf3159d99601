// Suite `serve`: requests/s and latency of `wmark serve` for signed HLS segment GETs, against a bare node:http static file
// handler serving the same files in the same run, over loopback with 16 concurrent connections (autocannon, driven from
// this process). Also measures POST /2.0/watermark for an existing watermark (API key auth, body validation, settings
// identity, a store lookup, freshly signed URLs). Each server runs in its own child process, so neither shares an event
// loop with the load generator. Alternates wmark/bare for N rounds and reports medians and the wmark/bare ratio.
import { readdirSync, statSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { watermarkDir } from '../harness/engine.js';
import { stopProcess } from '../harness/stop-process.js';
import { parseVideoRequest, parseWatermarkOrder } from '../src/core/api-requests.js';
import { inProcessJobQueue } from '../src/engine/app/job-runs.js';
import { LocalService } from '../src/engine/app/local-service.js';
import { openEngine } from '../src/engine/open/open-engine.js';
import { lastOf } from '../src/service/watch.js';
import { waitForQuiet } from './lib/measure.js';
import { type AutocannonRequest, autocannon, BARE_SERVER, type Measurement, measure, procRssMiB, skipClientBodies } from './lib/serve-load.js';
import { type Child, startChild } from './lib/server-process.js';
import { fmt, numberOption, OUT_DIR, REPO_ROOT, type Suite, type SuiteContext, WMARK_BIN, wmarkEnvironment } from './lib/suite.js';
import { sourceClip } from './lib/video.js';
import { type ServeRound, serveFigures, serveReport } from './serve-report.js';

const KEY = 'bench-serve';
const TEXT_SETTINGS = [
  { type: 'TEXT', content: 'bench viewer-0001@example.com', x: 0.97, y: 0.95, align: 'RIGHT', verticalAlign: 'BOTTOM', fontSize: 0.04, fontOpacity: 0.5 },
];
const CONTAINERS = ['m3u8'] as const;
async function fetchOk(url: string, init?: RequestInit): Promise<Response> {
  const res = await fetch(url, init);
  if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: HTTP ${res.status} ${await res.text().catch(() => '')}`);
  return res;
}

export interface ServingOptions {
  rounds: number;
  durationS: number;
  warmupS: number;
  connections: number;
  /** Length of the generated 720p clip whose segments are served. */
  seconds: number;
  crf: number;
  quietWaitMs: number;
  /** 'src': wmark serve from the TypeScript sources via tsx; 'bin': bin/wmark.js (dist/ when built). */
  serverMode: 'src' | 'bin';
  keepClientBodies: boolean;
  /** Write a V8 CPU profile of the wmark server here (on its exit). */
  cpuProfDir?: string;
  /** Working folder under bench/out/. */
  runName: string;
  keep: boolean;
}

/** Reads the serve suite's options; another suite embedding the measurement passes its own defaults. */
export function servingOptions(ctx: SuiteContext, defaults: { runName: string; durationS: number; quietWaitS: number }): ServingOptions {
  const opt = ctx.args.options;
  return {
    rounds: ctx.args.rounds,
    durationS: numberOption(opt.duration, defaults.durationS, 'duration'),
    warmupS: numberOption(opt.warmup, 3, 'warmup'),
    connections: numberOption(opt.connections, 16, 'connections'),
    seconds: numberOption(opt.seconds, 12, 'seconds'),
    // The natural clip carries temporal film grain: at wmark's default CRF 23 its 720p 4 s segments are ~12 MB each
    // (~24 Mbit/s), far from what a service streams. CRF 30 (ingest and watermark) gives ~250 KB segments (~0.5 Mbit/s).
    crf: numberOption(opt.crf, 30, 'crf'),
    quietWaitMs: numberOption(opt['quiet-wait'], defaults.quietWaitS, 'quiet-wait') * 1000,
    serverMode: opt.server === 'bin' ? 'bin' : 'src',
    keepClientBodies: opt['client-bodies'] === 'keep',
    cpuProfDir: typeof opt['cpu-prof'] === 'string' ? path.resolve(opt['cpu-prof']) : undefined,
    runName: defaults.runName,
    keep: ctx.args.keep,
  };
}

export type ServingResult = Awaited<ReturnType<typeof measureServing>>['result'];

/** The served watermark: its segments on disk and an API credential to POST it again. */
interface ServedWatermark {
  clip: Awaited<ReturnType<typeof sourceClip>>;
  runDir: string;
  dataDir: string;
  segDir: string;
  segments: { name: string; bytes: number }[];
  cred: { clientId: string; apiKey: string };
  videoId: string;
  watermarkId: string;
}

/** An engine in a fresh data dir, one ingested clip, one READY watermark, one API credential. */
async function prepareServedWatermark(ctx: SuiteContext, o: ServingOptions): Promise<ServedWatermark> {
  const { tools, log } = ctx;
  const clip = await sourceClip(tools, { width: 1280, height: 720, seconds: o.seconds, fps: 30, audio: true }, log);
  const runDir = path.join(OUT_DIR, o.runName);
  await rm(runDir, { recursive: true, force: true });
  await mkdir(runDir, { recursive: true });
  const dataDir = path.join(runDir, 'data');
  const engine = await openEngine({
    dataDir,
    ffmpeg: tools.ffmpeg.path,
    ffprobe: tools.ffprobe.path,
    font: tools.font.path,
    workers: ctx.machine.availableParallelism,
    encode: { preset: 'veryfast', crf: o.crf },
  });
  try {
    log(`ingesting ${path.relative(process.cwd(), clip.path)} and rendering one TEXT watermark (crf ${o.crf}) ...`);
    const queue = inProcessJobQueue(engine, { concurrency: 1 });
    const service = new LocalService(engine, { queue, baseUrl: 'http://127.0.0.1' });
    const { video } = await service.videos.create(parseVideoRequest({ sourceUrl: clip.path, key: KEY }));
    const ingested = await lastOf(service.videos.watch(video.id));
    if (ingested.video.status !== 'INGESTED') throw new Error(`ingest ended ${ingested.video.status}: ${ingested.video.error ?? ''}`);
    const { resource } = await service.watermarks.request(
      parseWatermarkOrder({ key: KEY, settings: TEXT_SETTINGS, containers: [...CONTAINERS] }, { api: '2.0', nowMs: engine.now() }),
    );
    const done = await lastOf(service.watermarks.watch(resource, 'complete'));
    if (done.status !== 'READY') throw new Error(`watermark ended ${done.status}`);
    await queue.close();
    const segDir = watermarkDir(engine, video.id, resource.id!);
    const segments = readdirSync(segDir)
      .filter((f) => /^seg_\d{5}\.ts$/.test(f))
      .sort()
      .map((name) => ({ name, bytes: statSync(path.join(segDir, name)).size }));
    log(`  ${segments.length} segments: ${segments.map((x) => `${(x.bytes / 1024).toFixed(0)} KB`).join(', ')}`);
    const cred = await service.credentials.create('bench serve');
    return { clip, runDir, dataDir, segDir, segments, cred, videoId: video.id, watermarkId: resource.id! };
  } finally {
    await engine.close();
  }
}

/** The node arguments of `wmark serve` on the data dir: from the sources via tsx ('src') or bin/wmark.js ('bin'). */
function wmarkServeArgs(o: ServingOptions, dataDir: string): string[] {
  const cliArgs = ['--data-dir', dataDir, '--json', 'serve', '--host', '127.0.0.1', '--port', '0'];
  // 'src' runs the CLI from the TypeScript sources (what is in the tree now; tsx only affects module loading);
  // 'bin' runs bin/wmark.js, which prefers a compiled dist/ when one exists (may be stale).
  const mainUrl = pathToFileURL(path.join(REPO_ROOT, 'src', 'cli', 'main.ts')).href;
  // `--cpu-prof DIR` writes a V8 CPU profile of the wmark server (on its exit) for finding per-request costs.
  const profile = o.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfDir}`] : [];
  if (o.serverMode === 'bin') return [...profile, WMARK_BIN, ...cliArgs];
  return [
    ...profile,
    '--import',
    import.meta.resolve('tsx'),
    '--input-type=module',
    '-e',
    `const { main } = await import(${JSON.stringify(mainUrl)}); const code = await main(process.argv.slice(1)); process.exitCode = code;`,
    '--',
    ...cliArgs,
  ];
}

type Which = 'wmarkGet' | 'bareGet' | 'wmarkPost';
type Requests = Record<Which, AutocannonRequest[]>;

/**
 * The requests each measurement cycles over, with signed URLs exactly as a client gets them: a POST for the existing
 * watermark, then its playlist's segment URIs. Checks first that every URL answers 200 with the file's size on both
 * servers, and that a tampered signature is refused.
 */
async function servedRequests(w: ServedWatermark, wmark: Child, bare: Child): Promise<Requests> {
  const { segments, cred, watermarkId } = w;
  const body = JSON.stringify({ key: KEY, settings: TEXT_SETTINGS, containers: CONTAINERS });
  const postHeaders = { 'content-type': 'application/json', 'x-api-client-id': cred.clientId, 'x-api-key': cred.apiKey };
  const postRes = await fetchOk(`${wmark.url}/2.0/watermark`, { method: 'POST', headers: postHeaders, body });
  const wm = (await postRes.json()) as { id: string; status: string; containers: { m3u8?: string } };
  if (postRes.status !== 200 || wm.id !== watermarkId || !wm.containers.m3u8) {
    throw new Error(`POST /2.0/watermark: expected 200 for the existing watermark ${watermarkId}, got ${postRes.status} ${JSON.stringify(wm)}`);
  }
  const m3u8 = new URL(wm.containers.m3u8);
  const playlist = await (await fetchOk(m3u8.href)).text();
  const segUris = playlist.split('\n').filter((l) => l.trim() && !l.startsWith('#'));
  const signedPaths = segUris.map((u) => {
    const abs = new URL(u.trim(), m3u8);
    return abs.pathname + abs.search;
  });
  if (signedPaths.length !== segments.length) throw new Error(`playlist lists ${signedPaths.length} segments, the folder holds ${segments.length}`);
  const barePaths = segUris.map((u) => `/${u.trim().split('?')[0]}`);

  for (let i = 0; i < segments.length; i++) {
    for (const [server, p] of [
      [wmark, signedPaths[i]!],
      [bare, barePaths[i]!],
    ] as const) {
      const res = await fetchOk(server.url + p);
      const got = (await res.arrayBuffer()).byteLength;
      if (got !== segments[i]!.bytes) throw new Error(`${server.name} ${p}: ${got} bytes, expected ${segments[i]!.bytes}`);
    }
  }
  const tampered = await fetch(wmark.url + signedPaths[0]!.replace(/signature=(.)/, (_, c: string) => `signature=${c === 'A' ? 'B' : 'A'}`));
  await tampered.arrayBuffer();
  if (tampered.status !== 403) throw new Error(`a tampered signature got HTTP ${tampered.status}, expected 403`);

  const getReqs = (paths: string[]): AutocannonRequest[] => paths.map((p) => ({ method: 'GET', path: p }));
  return { wmarkGet: getReqs(signedPaths), bareGet: getReqs(barePaths), wmarkPost: [{ method: 'POST', path: '/2.0/watermark', headers: postHeaders, body }] };
}

const LABELS: Record<Which, string> = {
  wmarkGet: 'wmark GET signed segment',
  bareGet: 'bare node:http GET segment',
  wmarkPost: 'wmark POST /2.0/watermark (existing)',
};

/** One round: wmark's and the bare server's GETs, the first alternating (so drift favours neither), then the POSTs. */
async function runServeRound(
  ctx: SuiteContext,
  o: ServingOptions,
  servers: Record<'wmark' | 'bare', Child>,
  requests: Requests,
  r: number,
): Promise<ServeRound> {
  const { log } = ctx;
  const quiet = () => (o.quietWaitMs > 0 ? waitForQuiet(0.3, o.quietWaitMs, log) : Promise.resolve(0));
  const order: Which[] = r % 2 === 1 ? ['wmarkGet', 'bareGet', 'wmarkPost'] : ['bareGet', 'wmarkGet', 'wmarkPost'];
  const got: Partial<Record<Which, Measurement>> = {};
  for (const which of order) {
    await quiet();
    log(`round ${r}/${o.rounds}: ${which} (${o.durationS} s, ${o.connections} connections) ...`);
    const m = await measure(LABELS[which], which === 'bareGet' ? servers.bare : servers.wmark, requests[which], o.connections, o.durationS);
    log(
      `  ${fmt(m.reqPerS, 0)} req/s, p50 ${fmt(m.latencyP50Ms)} ms, p99 ${fmt(m.latencyP99Ms)} ms, ${fmt(m.mbPerS, 1)} MB/s, non-2xx ${m.non2xx}, server ${fmt(m.serverCores)} cores`,
    );
    got[which] = m;
  }
  return { round: r, order, wmarkGet: got.wmarkGet!, bareGet: got.bareGet!, wmarkPost: got.wmarkPost!, ratio: got.wmarkGet!.reqPerS / got.bareGet!.reqPerS };
}

/**
 * Signed segment GETs of wmark serve against the bare handler (and POSTs of an existing watermark), alternated for
 * `rounds` rounds. Returns the JSON result and the report lines.
 */
export async function measureServing(ctx: SuiteContext, o: ServingOptions) {
  const { log } = ctx;
  const bodiesSkipped = o.keepClientBodies ? false : skipClientBodies();
  if (!o.keepClientBodies && !bodiesSkipped) log('note: could not patch autocannon body accumulation; the load generator may be the bottleneck');
  const w = await prepareServedWatermark(ctx, o);
  const { cwd, env } = await wmarkEnvironment(ctx, 'bench-serve-cwd-');
  const children: Child[] = [];
  try {
    log(`starting wmark serve (${o.serverMode}) and the bare node:http server ...`);
    const wmark = await startChild('wmark serve', process.execPath, wmarkServeArgs(o, w.dataDir), { cwd, env });
    children.push(wmark);
    const bare = await startChild('bare node:http', process.execPath, ['-e', BARE_SERVER, w.segDir], { cwd, env });
    children.push(bare);
    const requests = await servedRequests(w, wmark, bare);

    log(`warm-up: ${o.warmupS} s each ...`);
    if (o.warmupS > 0) {
      const warm = { connections: o.connections, duration: o.warmupS };
      await autocannon({ url: wmark.url, ...warm, requests: requests.wmarkGet });
      await autocannon({ url: bare.url, ...warm, requests: requests.bareGet });
      await autocannon({ url: wmark.url, ...warm, requests: requests.wmarkPost });
    }
    const rounds: ServeRound[] = [];
    for (let r = 1; r <= o.rounds; r++) rounds.push(await runServeRound(ctx, o, { wmark, bare }, requests, r));
    const rss = { wmarkMiB: procRssMiB(wmark.proc.pid), bareMiB: procRssMiB(bare.proc.pid) };
    const figures = serveFigures(rounds);
    const { durationS, warmupS, connections, crf, serverMode } = o;
    const result = {
      suite: 'serve',
      date: new Date().toISOString(),
      machine: ctx.machine,
      config: {
        connections,
        durationS,
        warmupS,
        rounds: o.rounds,
        crf,
        server: serverMode,
        clientBodiesSkipped: bodiesSkipped,
        clip: { ...w.clip },
        segments: w.segments,
      },
      ids: { videoId: w.videoId, watermarkId: w.watermarkId },
      rounds,
      median: figures.median,
      ratio: { getReqPerS: figures.ratio, getP99Latency: figures.p99Ratio, getServerCpuPerRequest: figures.cpuRatio },
      rss,
    };
    return { result, report: serveReport({ o, machine: ctx.machine, clip: w.clip, segments: w.segments, bodiesSkipped, rounds, figures, rss }) };
  } finally {
    for (const c of children.reverse()) await stopProcess(c.proc, { graceMs: 8_000 });
    await rm(cwd, { recursive: true, force: true });
    if (!o.keep) await rm(w.runDir, { recursive: true, force: true });
    else log(`kept working files in ${w.runDir}`);
  }
}

export const suite: Suite = {
  name: 'serve',
  description: 'wmark serve: signed segment GETs (and POSTs of an existing watermark) vs a bare node:http static handler, 16 connections, autocannon',
  async run(ctx: SuiteContext) {
    const { result, report } = await measureServing(ctx, servingOptions(ctx, { runName: 'serve-run', durationS: 10, quietWaitS: 60 }));
    process.stdout.write(`${report.join('\n')}\n`);
    return result;
  },
};
