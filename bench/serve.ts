// Suite `serve`: requests/s and latency of `wmark serve` for signed HLS segment GETs, against a bare node:http static file
// handler serving the same files in the same run, over loopback with 16 concurrent connections (autocannon, driven from
// this process). Also measures POST /2.0/watermark for an existing watermark (API key auth, body validation, settings
// identity, a store lookup, freshly signed URLs). Each server runs in its own child process, so neither shares an event
// loop with the load generator. Alternates wmark/bare for N rounds and reports medians and the wmark/bare ratio.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { watermarkDir } from '../harness/engine.js';
import { stopProcess } from '../harness/stop-process.js';
import { inProcessJobQueue } from '../src/engine/app/job-runs.js';
import { LocalService } from '../src/engine/app/local-service.js';
import { openEngine } from '../src/engine/open/open-engine.js';
import { lastOf } from '../src/service/watch.js';
import { machineBusySeconds, median, waitForQuiet } from './lib/measure.js';
import { type Child, startChild } from './lib/server-process.js';
import { fmt, formatMachine, numberOption, OUT_DIR, REPO_ROOT, type Suite, type SuiteContext, table, WMARK_BIN, wmarkEnvironment } from './lib/suite.js';
import { sourceClip } from './lib/video.js';

// ---- autocannon (CommonJS, no bundled types): the part of its programmatic API used here.
interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
}
interface AutocannonOptions {
  url: string;
  connections: number;
  duration: number;
  pipelining?: number;
  timeout?: number;
  requests?: AutocannonRequest[];
}
interface Histogram {
  average: number;
  mean: number;
  stddev: number;
  min: number;
  max: number;
  total: number;
  p50: number;
  p90: number;
  p99: number;
  p99_9?: number;
}
interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  resets: number;
  '2xx': number;
  statusCodeStats: Record<string, { count: number }>;
  latency: Histogram;
  requests: Histogram & { sent: number };
  throughput: Histogram;
}
const requireCjs = createRequire(import.meta.url);
const autocannon = requireCjs('autocannon') as (opts: AutocannonOptions) => Promise<AutocannonResult>;

/**
 * autocannon (v9) appends every response body chunk to a JS string (`req.body += chunk`, a UTF-8 decode of binary
 * video) only for `expectBody`/`verifyBody`/`onResponse`, none of which this suite uses. For 200+ KB segments that alone
 * pins the load generator at one full core around ~85 MB/s, i.e. it measures autocannon, not the servers. Dropping the
 * accumulation in this process leaves byte counts, status codes and latencies untouched. `--client-bodies keep` turns
 * this off. Returns whether the patch was applied.
 */
function skipClientBodies(): boolean {
  try {
    const Queue = requireCjs('autocannon/lib/pipelinedRequestsQueue.js') as { prototype: { addBody?: (data: unknown) => void } };
    if (typeof Queue.prototype.addBody !== 'function') return false;
    Queue.prototype.addBody = () => {};
    return true;
  } catch {
    return false;
  }
}

const KEY = 'bench-serve';
const TEXT_SETTINGS = [
  { type: 'TEXT', content: 'bench viewer-0001@example.com', x: 0.97, y: 0.95, align: 'RIGHT', verticalAlign: 'BOTTOM', fontSize: 0.04, fontOpacity: 0.5 },
];
const CONTAINERS = ['m3u8'] as const;
const CLK_TCK = 100; // USER_HZ on Linux: /proc/<pid>/stat times are in 1/100 s

/**
 * The baseline: what a competent minimal static handler does. stat for Content-Length (so keep-alive works without
 * chunking, as wmark's), then stream the file with fs.createReadStream defaults. No auth, no routing table, no validators.
 */
const BARE_SERVER = `
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const root = process.argv[1];
const server = http.createServer({ keepAliveTimeout: 5000 }, (req, res) => {
  const name = req.url.split('?')[0].slice(1);
  if (!/^seg_\\d{5}\\.ts$/.test(name)) { res.writeHead(404); return void res.end(); }
  const file = path.join(root, name);
  fs.stat(file, (err, st) => {
    if (err) { res.writeHead(404); return void res.end(); }
    res.writeHead(200, { 'Content-Type': 'video/mp2t', 'Content-Length': st.size });
    fs.createReadStream(file).on('error', () => res.destroy()).pipe(res);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write('http://127.0.0.1:' + server.address().port + '\\n'));
process.on('SIGTERM', () => { server.close(); server.closeAllConnections(); });
`;

/** CPU seconds (user, sys) a process has used so far, from /proc (NaN elsewhere). */
function procCpu(pid: number | undefined): { user: number; sys: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields after the command name start at field 3 (state); utime and stime are fields 14 and 15.
    return { user: Number(f[11]) / CLK_TCK, sys: Number(f[12]) / CLK_TCK };
  } catch {
    return { user: NaN, sys: NaN };
  }
}

function procRssMiB(pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

interface Measurement {
  label: string;
  reqPerS: number;
  totalRequests: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMaxMs: number;
  mbPerS: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** Cores the server process used during the run, and its CPU time per completed request. */
  serverCores: number;
  serverCpuUsPerReq: number;
  serverUserS: number;
  serverSysS: number;
  /** Cores the load generator (this process) used. */
  clientCores: number;
  /** Cores everything else on the machine used (noise). */
  otherCores: number;
  durationS: number;
}

async function measure(label: string, server: Child, requests: AutocannonRequest[], connections: number, durationS: number): Promise<Measurement> {
  const pid = server.proc.pid;
  const s0 = procCpu(pid);
  const c0 = process.cpuUsage();
  const b0 = machineBusySeconds();
  const t0 = performance.now();
  const r = await autocannon({ url: server.url, connections, duration: durationS, pipelining: 1, timeout: 10, requests });
  const wallS = (performance.now() - t0) / 1000;
  const busy = machineBusySeconds() - b0;
  const c = process.cpuUsage(c0);
  const s1 = procCpu(pid);
  const serverUser = s1.user - s0.user;
  const serverSys = s1.sys - s0.sys;
  const serverCpu = serverUser + serverSys;
  const clientCpu = (c.user + c.system) / 1e6;
  const completed = r.requests.total;
  const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([k, v]) => [k, v.count]));
  return {
    label,
    reqPerS: r.requests.average,
    totalRequests: completed,
    latencyP50Ms: r.latency.p50,
    latencyP99Ms: r.latency.p99,
    latencyMaxMs: r.latency.max,
    mbPerS: r.throughput.average / 1e6,
    ok2xx: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes,
    serverCores: serverCpu / wallS,
    serverCpuUsPerReq: completed ? (serverCpu * 1e6) / completed : NaN,
    serverUserS: serverUser,
    serverSysS: serverSys,
    clientCores: clientCpu / wallS,
    otherCores: Math.max(0, busy - serverCpu - clientCpu) / wallS,
    durationS: r.duration,
  };
}

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

/**
 * Signed segment GETs of wmark serve against the bare handler (and POSTs of an existing watermark), alternated for
 * `rounds` rounds. Returns the JSON result and the report lines.
 */
export async function measureServing(ctx: SuiteContext, o: ServingOptions) {
  const { tools, log } = ctx;
  const { durationS, warmupS, connections, seconds, crf, quietWaitMs, serverMode } = o;
  const bodiesSkipped = o.keepClientBodies ? false : skipClientBodies();
  if (!o.keepClientBodies && !bodiesSkipped) log('note: could not patch autocannon body accumulation; the load generator may be the bottleneck');
  const quiet = () => (quietWaitMs > 0 ? waitForQuiet(0.3, quietWaitMs, log) : Promise.resolve(0));

  // ---- setup: an engine in a fresh data dir, one ingested clip, one READY watermark, one API credential.
  const clip = await sourceClip(tools, { width: 1280, height: 720, seconds, fps: 30, audio: true }, log);
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
    encode: { preset: 'veryfast', crf },
  });
  let segDir: string;
  let cred: { clientId: string; apiKey: string };
  let videoId: string;
  let watermarkId: string;
  try {
    log(`ingesting ${path.relative(process.cwd(), clip.path)} and rendering one TEXT watermark (crf ${crf}) ...`);
    const queue = inProcessJobQueue(engine, { concurrency: 1 });
    const service = new LocalService(engine, { queue, baseUrl: 'http://127.0.0.1' });
    const { video } = await service.createVideo({ sourceUrl: clip.path, key: KEY });
    const ingested = await lastOf(service.watchVideo(video.id));
    if (ingested.video.status !== 'INGESTED') throw new Error(`ingest ended ${ingested.video.status}: ${ingested.video.error ?? ''}`);
    const { resource } = await service.requestWatermark({ key: KEY, settings: TEXT_SETTINGS, containers: [...CONTAINERS] });
    const done = await lastOf(service.watchWatermark(resource, 'complete'));
    if (done.status !== 'READY') throw new Error(`watermark ended ${done.status}`);
    await queue.close();
    videoId = video.id;
    watermarkId = resource.id!;
    segDir = watermarkDir(engine, video.id, watermarkId);
    cred = await service.createKey('bench serve');
  } finally {
    await engine.close();
  }
  const segFiles = readdirSync(segDir)
    .filter((f) => /^seg_\d{5}\.ts$/.test(f))
    .sort();
  const segments = segFiles.map((name) => ({ name, bytes: statSync(path.join(segDir, name)).size }));
  const meanKB = segments.reduce((a, s) => a + s.bytes, 0) / segments.length / 1024;
  log(`  ${segments.length} segments: ${segments.map((s) => `${(s.bytes / 1024).toFixed(0)} KB`).join(', ')}`);

  // ---- the two servers, each in its own process
  const { cwd, env } = await wmarkEnvironment(ctx, 'bench-serve-cwd-');
  const cliArgs = ['--data-dir', dataDir, '--json', 'serve', '--host', '127.0.0.1', '--port', '0'];
  // 'src' runs the CLI from the TypeScript sources (what is in the tree now; tsx only affects module loading);
  // 'bin' runs bin/wmark.js, which prefers a compiled dist/ when one exists (may be stale).
  const mainUrl = pathToFileURL(path.join(REPO_ROOT, 'src', 'cli', 'main.ts')).href;
  // `--cpu-prof DIR` writes a V8 CPU profile of the wmark server (on its exit) for finding per-request costs.
  const profile = o.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfDir}`] : [];
  const wmarkCmd =
    serverMode === 'src'
      ? [
          ...profile,
          '--import',
          import.meta.resolve('tsx'),
          '--input-type=module',
          '-e',
          `const { main } = await import(${JSON.stringify(mainUrl)}); const code = await main(process.argv.slice(1)); process.exitCode = code;`,
          '--',
          ...cliArgs,
        ]
      : [...profile, WMARK_BIN, ...cliArgs];
  const children: Child[] = [];
  try {
    log(`starting wmark serve (${serverMode}) and the bare node:http server ...`);
    const wmark = await startChild('wmark serve', process.execPath, wmarkCmd, { cwd, env });
    children.push(wmark);
    const bare = await startChild('bare node:http', process.execPath, ['-e', BARE_SERVER, segDir], { cwd, env });
    children.push(bare);

    // Signed URLs exactly as a client gets them: a POST for the existing watermark, then its playlist's segment URIs.
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

    // Sanity: every URL answers 200 with the file's size on both servers, and a tampered signature is refused.
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
    const wmarkGets = getReqs(signedPaths);
    const bareGets = getReqs(barePaths);
    const posts: AutocannonRequest[] = [{ method: 'POST', path: '/2.0/watermark', headers: postHeaders, body }];

    log(`warm-up: ${warmupS} s each ...`);
    if (warmupS > 0) {
      await autocannon({ url: wmark.url, connections, duration: warmupS, requests: wmarkGets });
      await autocannon({ url: bare.url, connections, duration: warmupS, requests: bareGets });
      await autocannon({ url: wmark.url, connections, duration: warmupS, requests: posts });
    }

    interface Round {
      round: number;
      order: string[];
      wmarkGet: Measurement;
      bareGet: Measurement;
      wmarkPost: Measurement;
      ratio: number;
    }
    const rounds: Round[] = [];
    for (let r = 1; r <= o.rounds; r++) {
      // Alternate which server goes first, so drift (thermal, page cache, other load) does not favour one.
      const first = r % 2 === 1 ? 'wmark' : 'bare';
      const got: Partial<Record<'wmarkGet' | 'bareGet' | 'wmarkPost', Measurement>> = {};
      const runOne = async (which: 'wmarkGet' | 'bareGet' | 'wmarkPost') => {
        await quiet();
        log(`round ${r}/${o.rounds}: ${which} (${durationS} s, ${connections} connections) ...`);
        const m =
          which === 'wmarkGet'
            ? await measure('wmark GET signed segment', wmark, wmarkGets, connections, durationS)
            : which === 'bareGet'
              ? await measure('bare node:http GET segment', bare, bareGets, connections, durationS)
              : await measure('wmark POST /2.0/watermark (existing)', wmark, posts, connections, durationS);
        log(
          `  ${fmt(m.reqPerS, 0)} req/s, p50 ${fmt(m.latencyP50Ms)} ms, p99 ${fmt(m.latencyP99Ms)} ms, ${fmt(m.mbPerS, 1)} MB/s, non-2xx ${m.non2xx}, server ${fmt(m.serverCores)} cores`,
        );
        got[which] = m;
      };
      const order: ('wmarkGet' | 'bareGet' | 'wmarkPost')[] = first === 'wmark' ? ['wmarkGet', 'bareGet', 'wmarkPost'] : ['bareGet', 'wmarkGet', 'wmarkPost'];
      for (const which of order) await runOne(which);
      rounds.push({
        round: r,
        order,
        wmarkGet: got.wmarkGet!,
        bareGet: got.bareGet!,
        wmarkPost: got.wmarkPost!,
        ratio: got.wmarkGet!.reqPerS / got.bareGet!.reqPerS,
      });
    }
    const rss = { wmarkMiB: procRssMiB(wmark.proc.pid), bareMiB: procRssMiB(bare.proc.pid) };

    // ---- report
    const medOf = (pick: (r: Round) => Measurement): Measurement => {
      const ms = rounds.map(pick);
      const k = <K extends keyof Measurement>(key: K) => median(ms.map((m) => m[key] as number));
      return {
        label: ms[0]!.label,
        reqPerS: k('reqPerS'),
        totalRequests: k('totalRequests'),
        latencyP50Ms: k('latencyP50Ms'),
        latencyP99Ms: k('latencyP99Ms'),
        latencyMaxMs: k('latencyMaxMs'),
        mbPerS: k('mbPerS'),
        ok2xx: ms.reduce((a, m) => a + m.ok2xx, 0),
        non2xx: ms.reduce((a, m) => a + m.non2xx, 0),
        errors: ms.reduce((a, m) => a + m.errors, 0),
        timeouts: ms.reduce((a, m) => a + m.timeouts, 0),
        statusCodes: {},
        serverCores: k('serverCores'),
        serverCpuUsPerReq: k('serverCpuUsPerReq'),
        serverUserS: k('serverUserS'),
        serverSysS: k('serverSysS'),
        clientCores: k('clientCores'),
        otherCores: k('otherCores'),
        durationS: k('durationS'),
      };
    };
    const med = { wmarkGet: medOf((r) => r.wmarkGet), bareGet: medOf((r) => r.bareGet), wmarkPost: medOf((r) => r.wmarkPost) };
    const ratio = median(rounds.map((r) => r.ratio));
    const p99Ratio = median(rounds.map((r) => r.wmarkGet.latencyP99Ms / r.bareGet.latencyP99Ms));
    const cpuRatio = median(rounds.map((r) => r.wmarkGet.serverCpuUsPerReq / r.bareGet.serverCpuUsPerReq));

    const row = (label: string, m: Measurement): (string | number)[] => [
      label,
      m.reqPerS,
      m.latencyP50Ms,
      m.latencyP99Ms,
      m.mbPerS,
      m.non2xx + m.errors + m.timeouts,
      m.serverCores,
      m.serverCpuUsPerReq,
      m.clientCores,
      m.otherCores,
    ];
    const rows: (string | number)[][] = [];
    for (const r of rounds) {
      for (const which of r.order) {
        const name = which === 'wmarkGet' ? 'wmark GET segment' : which === 'bareGet' ? 'bare  GET segment' : 'wmark POST existing';
        rows.push(row(`${r.round}  ${name}`, r[which as 'wmarkGet' | 'bareGet' | 'wmarkPost']));
      }
    }
    rows.push(row('median  wmark GET segment', med.wmarkGet));
    rows.push(row('median  bare  GET segment', med.bareGet));
    rows.push(row('median  wmark POST existing', med.wmarkPost));
    const maxOther = Math.max(...rounds.flatMap((r) => [r.wmarkGet.otherCores, r.bareGet.otherCores, r.wmarkPost.otherCores]));
    const maxClient = Math.max(...rounds.flatMap((r) => [r.wmarkGet.clientCores, r.bareGet.clientCores]));
    const lines = [
      '',
      `== bench serve: wmark serve vs a bare node:http static handler, ${connections} connections over loopback, ${durationS} s per measurement ==`,
      formatMachine(ctx.machine),
      `media:   ${clip.seconds} s ${clip.width}x${clip.height} natural clip, ingested and watermarked at crf ${crf}: ${segments.length} segments (${segments.map((s) => `${(s.bytes / 1024).toFixed(0)} KB`).join(', ')}; mean ${meanKB.toFixed(0)} KB)`,
      `servers: wmark = \`wmark serve\` from ${serverMode === 'src' ? 'src/ via tsx' : 'bin/wmark.js'} (child process); bare = node:http + fs.stat + fs.createReadStream (child process); load = autocannon ${connections} conns, pipelining 1, in the bench process${bodiesSkipped ? ' (response bodies counted, not accumulated)' : ''}`,
      `requests: each connection cycles over all ${segments.length} segment URLs (wmark: signed, from a real POST /2.0/watermark + playlist); POST = same body as the watermark's own request, x-api-client-id/x-api-key`,
      '',
      table(['round  measurement', 'req/s', 'p50 ms', 'p99 ms', 'MB/s', 'non-2xx/err', 'server cores', 'server us/req', 'client cores', 'other load'], rows),
      '',
      `(latency = autocannon, 2xx responses only; server cores / us per request = CPU of the server process from /proc; client = this process (autocannon);`,
      ` other load = cores used by the rest of the machine${maxOther > 0.2 ? ` -- up to ${fmt(maxOther)} here: the machine was shared, figures are noisy` : ''}${maxClient > 0.85 ? `; the load generator used up to ${fmt(maxClient)} cores, so on this ${ctx.machine.availableParallelism}-core machine it may cap the faster server` : ''})`,
      '',
      `ratio wmark/bare, segment GET req/s:        ${fmt(ratio)}  (per round ${rounds.map((r) => fmt(r.ratio)).join(' ')}; spread ${fmt(Math.min(...rounds.map((r) => r.ratio)))}-${fmt(Math.max(...rounds.map((r) => r.ratio)))})`,
      `ratio wmark/bare, segment GET p99 latency:  ${fmt(p99Ratio)}`,
      `ratio wmark/bare, server CPU per request:   ${fmt(cpuRatio)}`,
      `wmark POST /2.0/watermark (existing):       ${fmt(med.wmarkPost.reqPerS, 0)} req/s, p50 ${fmt(med.wmarkPost.latencyP50Ms)} ms, p99 ${fmt(med.wmarkPost.latencyP99Ms)} ms, ${fmt(med.wmarkPost.serverCpuUsPerReq, 0)} us server CPU/request`,
      `server RSS after the runs: wmark ${fmt(rss.wmarkMiB, 0)} MiB, bare ${fmt(rss.bareMiB, 0)} MiB`,
      '',
    ];
    const result = {
      suite: 'serve',
      date: new Date().toISOString(),
      machine: ctx.machine,
      config: { connections, durationS, warmupS, rounds: o.rounds, crf, server: serverMode, clientBodiesSkipped: bodiesSkipped, clip: { ...clip }, segments },
      ids: { videoId, watermarkId },
      rounds,
      median: med,
      ratio: { getReqPerS: ratio, getP99Latency: p99Ratio, getServerCpuPerRequest: cpuRatio },
      rss,
    };
    return { result, report: lines };
  } finally {
    for (const c of children.reverse()) await stopProcess(c.proc, { graceMs: 8_000 });
    await rm(cwd, { recursive: true, force: true });
    if (!o.keep) await rm(runDir, { recursive: true, force: true });
    else log(`kept working files in ${runDir}`);
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
