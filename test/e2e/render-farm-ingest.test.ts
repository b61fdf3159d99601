// Ingest and forensic preparation on the render farm, with real processes: a private redis-server, `wmark serve
// --queue` and `wmark worker`s on serve's media folder. Serve runs no media ffmpeg itself (its ffmpeg is a logging
// wrapper); one worker transcodes a title, the forensic variants of its segments are shared by every worker, a worker
// SIGKILLed mid-ingest has its task finished by another, and what the farm makes equals what an embedded ingest makes:
// the working segments frame for frame, the segment durations, and the forensic sidecar byte for byte.
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../harness/cli-helpers.js';
import { frameHashes, killSpawned, type SpawnedWorker, spawnWorker } from '../../harness/cluster.js';
import { ingestVideo, type TestEngine, testEngine } from '../../harness/engine.js';
import { fixture, natural, tempDir } from '../../harness/fixtures.js';
import { startRedis, type TestRedis } from '../../harness/redis.js';
import { call, freePort, keyHeaders, type SpawnedServe, spawnServe, waitFor } from '../../harness/serve-helpers.js';
import { countingRunner, FFMPEG } from '../../harness/tools.js';
import type { ForensicLayoutChoice } from '../../src/core/forensic-layout.js';
import { dataLayout, FORENSIC_DIR, LAYOUT_NAME, SIDECAR_NAME } from '../../src/engine/data-folder/layout.js';
import { loadOrCreateSecret } from '../../src/engine/data-folder/secret.js';
import { prepareForensic } from '../../src/engine/ingest/forensic-prepare.js';
import type { VideoRecord } from '../../src/engine/state/state-store.js';
import { dbRows } from '../helpers/ingest-helpers.js';
import { decodesCleanly } from '../helpers/media.js';

let redis: TestRedis;
let textSource: string;
let forensicSource: string;
/** The TEXT clip ingested embedded (no farm): the reference every farm ingest of it must equal. */
let embedded: { engine: TestEngine; video: VideoRecord; hashes: string[][] };
const dirs: string[] = [];
const serves: SpawnedServe[] = [];
const workers: SpawnedWorker[] = [];

beforeAll(async () => {
  // Forensic needs 5 minutes: a grain-free scene at 5 fps keeps its 75 segments cheap to prepare, and without audio its
  // transcode takes 1.5 s instead of 15 (the AAC encode of 5 minutes dominates; the TEXT clip covers audio).
  [redis, textSource, forensicSource] = await Promise.all([
    startRedis(),
    natural(12),
    fixture({ kind: 'scene', width: 320, height: 180, seconds: 300, fps: 5, audio: false }),
  ]);
  const engine = await testEngine();
  const { video } = await ingestVideo(engine, { source: textSource, key: 'embedded-text' });
  expect(video.status).toBe('INGESTED');
  embedded = { engine, video, hashes: await Promise.all(segmentFiles(path.join(engine.paths.videos, video.id)).map((f) => frameHashes(f))) };
});
afterEach(async () => {
  await killSpawned(workers, serves);
});
afterAll(async () => {
  await redis?.stop();
  await embedded?.engine.dispose();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function newDir(label: string): string {
  const dir = tempDir(label);
  dirs.push(dir);
  return dir;
}

const segmentFiles = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => /^seg_\d{5}\.ts$/.test(f))
        .sort()
        .map((f) => path.join(dir, f))
    : [];

/** An ffmpeg stand-in that logs each call and sleeps before an ingest transcode (the one run with a segment list). */
function wrapper(dir: string, name: string, ingestSleepSeconds = 0): { ffmpeg: string; log: string } {
  const file = path.join(dir, `${name}.sh`);
  const log = path.join(dir, `${name}.log`);
  writeFileSync(
    file,
    [
      '#!/bin/sh',
      `printf '%s %s %s\\n' "$(date +%s.%N)" "$$" "$*" >> '${log}'`,
      `case "$*" in *segment_list*) sleep ${ingestSleepSeconds};; esac`,
      `exec '${FFMPEG}' "$@"`,
      '',
    ].join('\n'),
  );
  chmodSync(file, 0o755);
  return { ffmpeg: file, log };
}

const logLines = (log: string) => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []);
/** ffmpeg runs that read media (ingest, probe fallbacks, variants, measurements); capability checks read none. */
const mediaRuns = (log: string) => logLines(log).filter((l) => / -i /.test(l));
const ingestRuns = (log: string) => logLines(log).filter((l) => l.includes('segment_list'));
/** One per segment of a forensic title: the encode of its variants (both blend modes in one run). */
const variantRuns = (log: string) => logLines(log).filter((l) => l.includes('grainmerge'));

const keys = new Map<string, { clientId: string; apiKey: string }>();

interface Served {
  proc: SpawnedServe;
  base: string;
  headers: Record<string, string>;
  dataDir: string;
  ffmpegLog: string;
}

/** `wmark serve --queue` on a fresh data folder, its ffmpeg a logging wrapper (serve must start none on media). */
async function farmServe(label: string, dataDir = newDir(label)): Promise<Served> {
  const own = wrapper(dataDir, `serve-ffmpeg-${serves.length}`);
  const proc = spawnServe(dataDir, ['--port', String(await freePort()), '--queue', redis.url], { WMARK_FFMPEG: own.ffmpeg });
  serves.push(proc);
  const base = await proc.url;
  // A data folder's first serve prints its key pair once; a restarted serve reuses it.
  const clientId = /client id:\s+(wmc_\S+)/.exec(proc.stderr())?.[1] ?? keys.get(dataDir)!.clientId;
  const apiKey = /API key:\s+(wmk_\S+)/.exec(proc.stderr())?.[1] ?? keys.get(dataDir)!.apiKey;
  keys.set(dataDir, { clientId, apiKey });
  // API 2.0 takes the key pair on every request.
  return { proc, base, headers: keyHeaders({ clientId, apiKey }), dataDir, ffmpegLog: own.log };
}

/** A worker on serve's media folder; every worker notices a dead worker's task after 2 s. */
async function worker(s: Served, ffmpeg: string): Promise<SpawnedWorker> {
  const home = newDir('farm-ingest-worker-home');
  const w = await spawnWorker(['--queue', redis.url, '--media', path.join(s.dataDir, 'media'), '--threads', '1', '--lock-timeout', '2'], {
    WMARK_FFMPEG: ffmpeg,
    WMARK_HOME: home,
    WMARK_CONFIG_DIR: path.join(home, 'config'),
  });
  workers.push(w);
  return w;
}

async function postVideo(s: Served, body: Record<string, unknown>): Promise<string> {
  const created = await call(s.base, 'POST', '/2.0/videos', { headers: s.headers, body });
  expect([200, 201], created.text).toContain(created.status);
  return created.json.id as string;
}

/** Polls the video like a client until it is INGESTED; returns the record as serve stored it. */
async function ingested(s: Served, id: string, timeoutMs = 120_000): Promise<VideoRecord> {
  await waitFor(
    async () => {
      const r = await call(s.base, 'GET', `/2.0/videos/${id}`, { headers: s.headers });
      expect(r.json.status, r.text).not.toMatch(/^FAILED/);
      return r.json.status === 'INGESTED' ? true : undefined;
    },
    `video ${id} to be INGESTED`,
    timeoutMs,
    200,
  );
  const [row] = dbRows<{ segments: string; time_origin: number; duration: number; width: number; height: number }>(
    path.join(s.dataDir, 'wmark.db'),
    'SELECT * FROM videos WHERE id = ?',
    id,
  );
  return { ...row!, segments: JSON.parse(row!.segments) as number[], timeOrigin: row!.time_origin, durationSeconds: row!.duration } as unknown as VideoRecord;
}

/** The farm's working segments equal the embedded ingest's: same files, durations, time origin, and decoded frames. */
async function expectEmbeddedSegments(s: Served, id: string, video: VideoRecord): Promise<void> {
  expect(video.segments).toEqual(embedded.video.segments);
  expect(video.timeOrigin).toBe(embedded.video.timeOrigin);
  expect(video.durationSeconds).toBe(embedded.video.durationSeconds);
  const dir = path.join(s.dataDir, 'media', 'videos', id);
  // What an embedded ingest publishes, and nothing else (the stored source is gone once the video is INGESTED).
  expect(readdirSync(dir).sort()).toEqual(readdirSync(path.join(embedded.engine.paths.videos, embedded.video.id)).sort());
  const files = segmentFiles(dir);
  expect(files).toHaveLength(embedded.hashes.length);
  for (const [i, file] of files.entries()) {
    await decodesCleanly(file);
    expect(await frameHashes(file), path.basename(file)).toEqual(embedded.hashes[i]);
  }
}

describe('ingest on the render farm', () => {
  it('a TEXT video: one worker transcodes it, serve runs no media ffmpeg, and the result equals an embedded ingest', async () => {
    const s = await farmServe('farm-ingest-text');
    expect(s.proc.stderr()).toMatch(/segment renders, ingests and forensic preparation go to redis:/);
    const logs = [wrapper(s.dataDir, 'w1'), wrapper(s.dataDir, 'w2')];
    await Promise.all(logs.map((l) => worker(s, l.ffmpeg)));
    const id = await postVideo(s, { sourceUrl: textSource, key: 'farm-text' });
    const video = await ingested(s, id);

    expect(logs.map((l) => ingestRuns(l.log).length).sort()).toEqual([0, 1]);
    expect(mediaRuns(s.ffmpegLog)).toEqual([]);
    await expectEmbeddedSegments(s, id, video);

    // The same request again starts nothing new anywhere.
    expect(await postVideo(s, { sourceUrl: textSource, key: 'farm-text' })).toBe(id);
    expect(logs.map((l) => ingestRuns(l.log).length).reduce((a, b) => a + b, 0)).toBe(1);
  });

  it('a worker SIGKILLed mid-ingest: another worker transcodes the video, which ends INGESTED and equal to an embedded ingest', async () => {
    const s = await farmServe('farm-ingest-kill');
    const slow = wrapper(s.dataDir, 'doomed', 60);
    const doomed = await worker(s, slow.ffmpeg);
    const id = await postVideo(s, { sourceUrl: textSource, key: 'farm-kill' });
    await until(() => ingestRuns(slow.log).length === 1, 'the doomed worker to start the ingest', 60_000, 50);
    doomed.child.kill('SIGKILL');
    expect((await doomed.done).signal).toBe('SIGKILL');

    const fine = wrapper(s.dataDir, 'rescuer');
    await worker(s, fine.ffmpeg);
    const video = await ingested(s, id);
    expect(ingestRuns(fine.log)).toHaveLength(1);
    expect(mediaRuns(s.ffmpegLog)).toEqual([]);
    await expectEmbeddedSegments(s, id, video);
  });

  it('Redis restarted empty mid-ingest: serve queues the ingest again from its own state, and the video ends INGESTED', async () => {
    const s = await farmServe('farm-ingest-redis');
    const patient = wrapper(s.dataDir, 'patient', 3);
    await worker(s, patient.ffmpeg);
    const id = await postVideo(s, { sourceUrl: textSource, key: 'farm-redis' });
    await until(() => ingestRuns(patient.log).length === 1, 'the worker to start the ingest', 60_000, 50);
    await redis.restart();
    const video = await ingested(s, id);
    expect(mediaRuns(s.ffmpegLog)).toEqual([]);
    await expectEmbeddedSegments(s, id, video);
  });

  it('serve SIGKILLed mid-ingest and started again: it joins the ingest the worker is running, which is done once', async () => {
    const s = await farmServe('farm-ingest-serve-restart');
    const steady = wrapper(s.dataDir, 'steady', 4);
    await worker(s, steady.ffmpeg);
    const id = await postVideo(s, { sourceUrl: textSource, key: 'farm-serve-restart' });
    await until(() => ingestRuns(steady.log).length === 1, 'the worker to start the ingest', 60_000, 50);
    s.proc.kill('SIGKILL');
    await s.proc.exited;

    const again = await farmServe('farm-ingest-serve-restart', s.dataDir);
    // The dead serve's lease on the job goes stale first (20 s).
    const video = await ingested(again, id, 90_000);
    expect(ingestRuns(steady.log)).toHaveLength(1);
    expect(mediaRuns(again.ffmpegLog)).toEqual([]);
    await expectEmbeddedSegments(again, id, video);
  });

  it('forensic preparation: two workers share the segments, each prepared once, and the sidecar equals an embedded preparation', async () => {
    await farmForensic('farm-ingest-forensic');
  });

  it("forensic preparation in the 'split' layout: the task carries it, workers encode halves, and the result equals an embedded one", async () => {
    const { s, id, runs } = await farmForensic('farm-ingest-forensic-split', 'split');
    // Each segment's run encodes its halves (the split layout's plan), not four whole variants.
    expect(
      runs.every((l) => l.includes('trim=end_frame=10') && !l.includes("enable='lt(n,")),
      runs[0],
    ).toBe(true);
    const r = await call(s.base, 'GET', `/2.0/videos/${id}`, { headers: s.headers });
    expect(r.json).toMatchObject({ enableForensic: true, forensicLayout: 'split' });
  });
});

/**
 * A forensic title ingested on a farm of two workers (in `layout` when given): every segment prepared once, shared
 * by both workers, serve running no media ffmpeg, and the files equal an embedded preparation of the same segments.
 */
async function farmForensic(label: string, layout?: ForensicLayoutChoice): Promise<{ s: Served; id: string; runs: string[] }> {
  const s = await farmServe(label);
  const logs = [wrapper(s.dataDir, 'f1'), wrapper(s.dataDir, 'f2')];
  await Promise.all(logs.map((l) => worker(s, l.ffmpeg)));
  const id = await postVideo(s, { sourceUrl: forensicSource, key: label, enableForensic: true, ...(layout ? { forensicLayout: layout } : {}) });
  const started = Date.now();
  const video = await ingested(s, id, 240_000);
  const farmMs = Date.now() - started;
  expect(video.segments).toHaveLength(75);

  const perWorker = logs.map((l) => variantRuns(l.log).length);
  expect(
    perWorker.reduce((a, b) => a + b, 0),
    JSON.stringify(perWorker),
  ).toBe(75);
  expect(
    perWorker.every((n) => n > 0),
    JSON.stringify(perWorker),
  ).toBe(true);
  expect(mediaRuns(s.ffmpegLog)).toEqual([]);

  // The embedded preparation of the same working segments, with this title's id and serve's secret.
  const dir = path.join(s.dataDir, 'media', 'videos', id);
  const reference = newDir(`${label}-reference`);
  for (const file of segmentFiles(dir)) writeFileSync(path.join(reference, path.basename(file)), readFileSync(file));
  const secret = loadOrCreateSecret(dataLayout(s.dataDir).secret);
  const embeddedStarted = Date.now();
  await prepareForensic(countingRunner(), {
    videoId: id,
    dir: reference,
    width: video.width!,
    height: video.height!,
    fps: 5,
    gop: 20,
    hasAudio: false,
    segmentDurations: video.segments,
    encode: { preset: 'veryfast', crf: 23 },
    workers: 2,
    secret,
    ...(layout ? { layout } : {}),
  });
  const embeddedMs = Date.now() - embeddedStarted;
  const farmFiles = readdirSync(path.join(dir, FORENSIC_DIR)).sort();
  expect(farmFiles).toEqual(readdirSync(path.join(reference, FORENSIC_DIR)).sort());
  expect(farmFiles.filter((f) => f.startsWith('measure_') || f.startsWith('half_'))).toEqual([]);
  expect(readFileSync(path.join(dir, FORENSIC_DIR, SIDECAR_NAME)).equals(readFileSync(path.join(reference, FORENSIC_DIR, SIDECAR_NAME)))).toBe(true);
  expect(readFileSync(path.join(dir, FORENSIC_DIR, LAYOUT_NAME), 'utf8')).toBe(readFileSync(path.join(reference, FORENSIC_DIR, LAYOUT_NAME), 'utf8'));
  // Variants: the first, a middle and the last segment, decoded frame for frame.
  for (const name of farmFiles.filter((f) => /^(aa|bb|a|b)_000(00|37|74)\.ts$/.test(f))) {
    expect(await frameHashes(path.join(dir, FORENSIC_DIR, name)), name).toEqual(await frameHashes(path.join(reference, FORENSIC_DIR, name)));
  }
  const at = (lines: string[]) => Number(lines[0]?.split(' ')[0]);
  const transcodeStarted = at(logs.flatMap((l) => ingestRuns(l.log)));
  const variantsStarted = Math.min(...logs.map((l) => at(variantRuns(l.log))));
  console.log(
    `forensic ingest (${layout ?? 'whole'}) of 5 min (5 fps, 320x180) on 2 workers: ${farmMs} ms end to end, of which the transcode ${Math.round((variantsStarted - transcodeStarted) * 1000)} ms; embedded preparation alone (2 threads): ${embeddedMs} ms`,
  );
  return { s, id, runs: logs.flatMap((l) => variantRuns(l.log)) };
}
