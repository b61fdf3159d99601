// Ingest with the real engine: working segments checked packet by packet, idempotence by key, bad inputs that must
// leave nothing behind (engine and CLI), remote sources, and `wmark video list|show`.
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, runCli } from '../../harness/cli.js';
import { ingestVideo, type TestEngine, testEngine, workingSegment } from '../../harness/engine.js';
import { fixture, flat, tempDir } from '../../harness/fixtures.js';
import { FFMPEG, FFPROBE } from '../../harness/tools.js';
import { segmentFileName, segmentFrameCounts } from '../../src/core/plan/segment-timing.js';
import type { VideoRecord } from '../../src/engine/state/state-store.js';
import { probeMedia } from '../../src/ffmpeg/probe-media.js';
import { createProcessRunner } from '../../src/ffmpeg/run-ffmpeg.js';
import { audioOnly, closedPort, dataLayout, dbRows, entries, leftovers, ntscOddSize, rejection } from '../helpers/ingest-helpers.js';
import { decodeFrame, decodesCleanly, type Packet, videoPackets } from '../helpers/media.js';

const probe = (file: string) => probeMedia(createProcessRunner(FFMPEG, FFPROBE), file);

interface SegmentReport {
  packets: Packet[];
  firstPts: number;
}

/**
 * Checks the working segments of an ingested video against its record: one file per entry of video.segments, each a
 * single closed GOP that starts on a keyframe, decodes on its own at the working size, holds exactly its share of
 * frames at a constant rate, and starts where the previous one ended.
 */
async function checkWorkingSegments(engine: TestEngine, video: VideoRecord, size: { width: number; height: number }): Promise<SegmentReport[]> {
  const fps = { num: video.fpsNum!, den: video.fpsDen! };
  const frame = fps.den / fps.num;
  const planned = segmentFrameCounts(fps, Math.round(video.segments.reduce((a, b) => a + b, 0) / frame), !video.enableForensic);
  expect(entries(path.join(engine.paths.videos, video.id)).filter((f) => f.endsWith('.ts'))).toEqual(video.segments.map((_, i) => segmentFileName(i)));
  const reports: SegmentReport[] = [];
  for (const [i, duration] of video.segments.entries()) {
    const file = workingSegment(engine, video.id, i);
    const packets = await videoPackets(file);
    const frames = Math.round(duration / frame);
    expect(Math.abs(frames * frame - duration), `segment ${i} lasts a whole number of frames`).toBeLessThan(1e-5);
    expect(packets, `segment ${i} packet count`).toHaveLength(frames);
    if (i < video.segments.length - 1) expect(frames, `segment ${i} holds its planned frames (lead segments, then one GOP)`).toBe(planned[i]);
    expect(packets[0]!.keyframe, `segment ${i} starts with a keyframe`).toBe(true);
    expect(
      packets.filter((p) => p.keyframe),
      `segment ${i} holds exactly one keyframe`,
    ).toHaveLength(1);
    for (let k = 1; k < packets.length; k++) {
      expect(Math.abs(packets[k]!.pts - packets[k - 1]!.pts - frame), `segment ${i} frame ${k} follows at a constant rate`).toBeLessThan(frame / 2);
    }
    await decodesCleanly(file);
    await decodeFrame(file, 0, size); // throws unless the decoded picture has exactly this size
    reports.push({ packets, firstPts: packets[0]!.pts });
  }
  expect(Math.abs(reports[0]!.firstPts - video.timeOrigin), 'timeOrigin is the first frame time').toBeLessThan(frame / 2);
  for (let i = 0; i + 1 < reports.length; i++) {
    const expected = reports[i]!.firstPts + video.segments[i]!;
    expect(Math.abs(reports[i + 1]!.firstPts - expected), `segment ${i + 1} starts where segment ${i} ends`).toBeLessThan(frame / 2);
  }
  return reports;
}

describe('ingest of a 10 s 320x180 30 fps video', () => {
  let engine: TestEngine;
  let source: string;
  let video: VideoRecord;

  beforeAll(async () => {
    source = await flat();
    engine = await testEngine();
    const result = await ingestVideo(engine, { source, key: 'flat-10s', name: 'Flat ten' });
    expect(result.created).toBe(true);
    video = result.video;
  });
  afterAll(async () => await engine.dispose());

  it('records the probed video with segment durations that add up to the source within one frame', async () => {
    const info = await probe(source);
    expect(video).toMatchObject({
      key: 'flat-10s',
      name: 'Flat ten',
      status: 'INGESTED',
      width: 320,
      height: 180,
      fpsNum: 30,
      fpsDen: 1,
      hasAudio: true,
      error: null,
    });
    expect(video.sourceUrl).toBe(source);
    expect(video.segments).toEqual([0.5, 0.5, 1, 2, 4, 2]);
    const total = video.segments.reduce((a, b) => a + b, 0);
    expect(Math.abs(total - info.durationSeconds)).toBeLessThanOrEqual(1 / 30);
    expect(video.durationSeconds).toBeCloseTo(total, 6);
    // The row as stored, read through a second connection.
    expect(dbRows(engine.paths.db, 'SELECT key, status, segments, duration, fps_num, fps_den, width, height, has_audio, error FROM videos')).toEqual([
      {
        key: 'flat-10s',
        status: 'INGESTED',
        segments: '[0.5,0.5,1,2,4,2]',
        duration: 10,
        fps_num: 30,
        fps_den: 1,
        width: 320,
        height: 180,
        has_audio: 1,
        error: null,
      },
    ]);
  });

  it('writes closed-GOP segments that start on a keyframe, hold their frame counts and join without a gap', async () => {
    const reports = await checkWorkingSegments(engine, video, { width: 320, height: 180 });
    expect(reports.map((r) => r.packets.length)).toEqual([15, 15, 30, 60, 120, 60]);
    expect(reports.reduce((n, r) => n + r.packets.length, 0)).toBe(300);
  });

  it('leaves no scratch files behind', () => {
    expect(entries(engine.paths.tmp)).toEqual([]);
    expect(entries(engine.paths.videos)).toEqual([video.id]);
  });

  it('returns the same video for the same key again without running ffmpeg at all', async () => {
    engine.runner.calls.length = 0;
    const again = await ingestVideo(engine, { source, key: 'flat-10s' });
    expect(again.created).toBe(false);
    expect(again.video.id).toBe(video.id);
    expect(again.video).toEqual(video);
    // Another source under the same key is refused, not silently ignored, and reads nothing.
    const other = await rejection(ingestVideo(engine, { source: '/nonexistent/other.mp4', key: 'flat-10s' }));
    expect(other.code).toBe('KEY_EXISTS');
    expect(other.message).toBe(`the key "flat-10s" already names another source (${source})`);
    expect(engine.runner.calls).toEqual([]);
    expect(dbRows(engine.paths.db, 'SELECT id FROM videos')).toEqual([{ id: video.id }]);
  });
});

describe('ingest of other frame rates and sizes', () => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await testEngine();
  });
  afterAll(async () => await engine.dispose());

  it('ingests 29.97 fps at an odd size (321x181) into even-sized segments of 1.001 s, 1.001 s, 2.002 s, then 4.004 s', async () => {
    const source = await ntscOddSize();
    const info = await probe(source);
    expect([info.width, info.height, info.fps]).toEqual([321, 181, { num: 30000, den: 1001 }]);
    const { video, created } = await ingestVideo(engine, { source, key: 'ntsc-odd' });
    expect(created).toBe(true);
    expect(video).toMatchObject({ status: 'INGESTED', fpsNum: 30000, fpsDen: 1001, hasAudio: true });
    // 7 s at 29.97 fps = 210 frames: lead segments of 15, 15, 30 and 60 frames, then 90 frames (3.003 s).
    expect(video.segments).toEqual([0.5005, 0.5005, 1.001, 2.002, 3.003]);
    expect(Math.abs(video.segments.reduce((a, b) => a + b, 0) - info.durationSeconds)).toBeLessThanOrEqual(1001 / 30000);
    const reports = await checkWorkingSegments(engine, video, { width: 320, height: 180 });
    expect(reports.map((r) => r.packets.length)).toEqual([15, 15, 30, 60, 90]);
  });

  it('ingests a mute 25 fps video into 13, 13, 25 and 49-frame lead segments, then 100-frame ones', async () => {
    const source = await fixture({ kind: 'flat', color: '884422', width: 320, height: 180, seconds: 6, fps: 25, audio: false });
    const { video } = await ingestVideo(engine, { source, key: 'pal-mute' });
    expect(video).toMatchObject({ status: 'INGESTED', fpsNum: 25, fpsDen: 1, hasAudio: false, width: 320, height: 180 });
    expect(video.segments).toEqual([0.52, 0.52, 1, 1.96, 2]);
    const reports = await checkWorkingSegments(engine, video, { width: 320, height: 180 });
    expect(reports.map((r) => r.packets.length)).toEqual([13, 13, 25, 49, 50]);
    expect(entries(engine.paths.tmp)).toEqual([]);
  });
});

describe('bad inputs', () => {
  let work: string;
  let textAsMp4: string;
  let empty: string;
  let audio: string;
  let port: number;

  beforeAll(async () => {
    work = tempDir('bad-inputs');
    textAsMp4 = path.join(work, 'notes.mp4');
    writeFileSync(textAsMp4, 'these are meeting notes, not a video\n'.repeat(20));
    empty = path.join(work, 'empty.mp4');
    writeFileSync(empty, '');
    audio = await audioOnly();
    port = await closedPort();
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  const cases = () => [
    {
      what: 'a text file named .mp4',
      source: textAsMp4,
      code: 'NOT_A_VIDEO',
      message: `${textAsMp4} is not a readable media file`,
      hint: /^It holds text, not a video: give a video file \(mp4, mov, mkv, webm, \.\.\.\) or a URL that answers with one\. \(ffmpeg: .*moov atom not found/,
    },
    {
      what: 'a missing path',
      source: path.join(work, 'missing.mp4'),
      code: 'SOURCE_NOT_FOUND',
      message: `source file not found: ${path.join(work, 'missing.mp4')}`,
      hint: /Check the path/,
    },
    { what: 'a zero-length file', source: empty, code: 'SOURCE_EMPTY', message: `source file is empty (0 bytes): ${empty}`, hint: null },
    { what: 'an audio-only file', source: audio, code: 'NO_VIDEO_STREAM', message: `${audio} has no video stream`, hint: /^It contains: audio\.$/ },
    {
      what: 'a URL to a closed loopback port',
      source: `http://127.0.0.1:${port}/video.mp4`,
      code: 'SOURCE_UNREACHABLE',
      message: new RegExp(`^could not read http://127\\.0\\.0\\.1:${port}/video\\.mp4: .*ECONNREFUSED`),
      hint: /Check the URL/,
    },
  ];

  it('throws the right WmarkError for each and leaves no row, media or scratch files', async () => {
    const engine = await testEngine();
    try {
      for (const c of cases()) {
        const error = await rejection(ingestVideo(engine, { source: c.source, key: `bad-${c.code}` }));
        expect(error.code, c.what).toBe(c.code);
        expect(error.exitCode, c.what).toBe(2);
        if (typeof c.message === 'string') expect(error.message, c.what).toBe(c.message);
        else expect(error.message, c.what).toMatch(c.message);
        if (c.hint === null) expect(error.hint, c.what).toBeUndefined();
        else expect(error.hint, c.what).toMatch(c.hint);
        expect(leftovers(engine.dataDir), c.what).toEqual({ rows: 0, videos: [], tmp: [] });
        expect(engine.runner.encodes(), c.what).toBe(0);
      }
    } finally {
      await engine.dispose();
    }
  });

  it('exits 2 (unusable input) from the CLI with a JSON error for each and leaves nothing behind', async () => {
    const dataDir = tempDir('bad-inputs-cli');
    const configDir = tempDir('bad-inputs-config');
    try {
      for (const c of cases()) {
        const r = await runCli(['--json', '--data-dir', dataDir, 'ingest', c.source], { cwd: os.tmpdir(), env: { WMARK_CONFIG_DIR: configDir } });
        expect(r.code, c.what).toBe(2);
        const body = r.json<{ error: { code: string; message: string; hint: string | null } }>();
        expect(Object.keys(body), c.what).toEqual(['error']);
        expect(body.error.code, c.what).toBe(c.code);
        if (typeof c.message === 'string') expect(body.error.message, c.what).toBe(c.message);
        else expect(body.error.message, c.what).toMatch(c.message);
        expect(body.error, c.what).toHaveProperty('hint');
        if (c.hint === null) expect(body.error.hint, c.what).toBeNull();
        else expect(body.error.hint, c.what).toMatch(c.hint);
        // --json keeps stderr free of progress text.
        expect(r.stderr, c.what).toBe('');
        expect(leftovers(dataDir), c.what).toEqual({ rows: 0, videos: [], tmp: [] });
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(configDir, { recursive: true, force: true });
    }
  });

  it('explains the error on stderr in plain mode', async () => {
    const dataDir = tempDir('bad-inputs-plain');
    try {
      const r = await runCli(['--data-dir', dataDir, 'ingest', textAsMp4], { cwd: os.tmpdir(), env: { WMARK_CONFIG_DIR: dataDir } });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`error: ${textAsMp4} is not a readable media file\n`);
      expect(r.stderr).toMatch(/hint: .*moov atom not found/);
      expect(leftovers(dataDir)).toEqual({ rows: 0, videos: [], tmp: [] });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('remote sources', () => {
  let engine: TestEngine;
  let server: http.Server;
  let port: number;
  let clip: Buffer;

  beforeAll(async () => {
    clip = readFileSync(await fixture({ kind: 'flat', color: '225588', width: 320, height: 180, seconds: 3, fps: 30 }));
    server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/clip.mp4') res.writeHead(200, { 'content-type': 'video/mp4' }).end(clip);
      else if (url.pathname === '/moved') res.writeHead(302, { location: '/clip.mp4' }).end();
      else if (url.pathname === '/notes.mp4') res.writeHead(200, { 'content-type': 'video/mp4' }).end('not a video\n');
      else if (url.pathname === '/empty.mp4') res.writeHead(200, { 'content-type': 'video/mp4' }).end();
      else res.writeHead(404).end('no such file');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
    engine = await testEngine();
  });
  afterAll(async () => {
    await engine.dispose();
    await new Promise((resolve) => server.close(resolve));
  });

  it('ingests an http URL given by host name (the bundled static ffmpeg cannot resolve names itself)', async () => {
    const source = `http://localhost:${port}/moved?viewer=1`;
    const { video, created } = await ingestVideo(engine, { source });
    expect(created).toBe(true);
    expect(video).toMatchObject({ key: source, sourceUrl: source, status: 'INGESTED', width: 320, height: 180, hasAudio: true, segments: [0.5, 0.5, 1, 1] });
    await checkWorkingSegments(engine, video, { width: 320, height: 180 });
    expect(entries(engine.paths.tmp)).toEqual([]);
  });

  it.each([
    ['/notes.mp4', 'NOT_A_VIDEO', /is not a readable media file/],
    ['/missing.mp4', 'SOURCE_UNREACHABLE', /: the server answered 404 Not Found$/],
    ['/empty.mp4', 'SOURCE_EMPTY', /^source is empty \(0 bytes\)/],
  ])('rejects %s as %s and leaves nothing behind', async (pathname, code, message) => {
    const before = leftovers(engine.dataDir);
    const error = await rejection(ingestVideo(engine, { source: `http://127.0.0.1:${port}${pathname}` }));
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
    expect(error.message).toContain(`http://127.0.0.1:${port}${pathname}`);
    expect(leftovers(engine.dataDir)).toEqual(before);
    expect(before.tmp).toEqual([]);
  });

  it('reports a host name that does not resolve as SOURCE_UNREACHABLE', async () => {
    const error = await rejection(ingestVideo(engine, { source: 'http://no-such-host.invalid/video.mp4' }));
    expect(error.code).toBe('SOURCE_UNREACHABLE');
    expect(error.message).toMatch(/^could not read http:\/\/no-such-host\.invalid\/video\.mp4: .*(ENOTFOUND|EAI_AGAIN)/);
  });
});

describe('wmark video list / show', () => {
  let dataDir: string;
  let cwd: string;
  let id: string;
  const cli = (...argv: string[]): Promise<CliResult> => runCli(['--data-dir', dataDir, ...argv], { cwd, env: { WMARK_CONFIG_DIR: cwd } });

  beforeAll(async () => {
    dataDir = tempDir('video-cli');
    cwd = tempDir('video-cli-cwd');
    copyFileSync(await flat(), path.join(cwd, 'clip.mp4'));
  });
  afterAll(() => {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(cwd, { recursive: true, force: true });
  });

  it('says there are no videos yet in an empty data dir', async () => {
    const plain = await cli('video', 'list');
    expect(plain.code).toBe(0);
    expect(plain.stdout).toBe('no videos yet: add one with `wmark ingest <file>`\n');
    const json = await cli('--json', 'video', 'list');
    expect(json.code).toBe(0);
    expect(json.json()).toEqual([]);
  });

  it('ingests through the CLI and prints the video resource', async () => {
    const source = path.join(cwd, 'clip.mp4');
    const r = await cli('--json', 'ingest', source, '--key', 'clip', '--name', 'My clip');
    expect(r.code).toBe(0);
    const v = r.json();
    expect(v).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      key: 'clip',
      sourceUrl: source,
      name: 'My clip',
      status: 'INGESTED',
      enableForensic: false,
      width: 320,
      height: 180,
      duration: 10,
      frameRate: 30,
      hasAudio: true,
      segments: 6,
      createdOn: expect.any(Number),
    });
    id = v.id;
    expect(Math.abs(v.createdOn - Date.now())).toBeLessThan(120_000);
    expect(entries(dataLayout(dataDir).videos)).toEqual([id]);
    // The same again: nothing to do, said on stderr in plain mode.
    const again = await cli('ingest', source, '--key', 'clip');
    expect(again.code).toBe(0);
    expect(again.stderr).toContain(`already ingested as ${id}; nothing to do`);
    expect(again.stdout).toContain(`video  ${id}\n`);
  });

  it('lists videos as JSON and as plain lines', async () => {
    const json = await cli('--json', 'video', 'list');
    expect(json.code).toBe(0);
    expect(json.json()).toEqual([expect.objectContaining({ id, key: 'clip', status: 'INGESTED', duration: 10, segments: 6 })]);
    const plain = await cli('video', 'list');
    expect(plain.code).toBe(0);
    // Columns are aligned; piped output has no header row (a terminal gets one).
    expect(plain.stdout).toBe(`${id}  INGESTED     10.0 s  clip\n`);
    const filtered = await cli('--json', 'video', 'list', '--key', 'other');
    expect(filtered.json()).toEqual([]);
  });

  it('shows one video by id or by key', async () => {
    const byId = await cli('--json', 'video', 'show', id);
    const byKey = await cli('--json', 'video', 'show', 'clip');
    expect(byId.code).toBe(0);
    expect(byKey.code).toBe(0);
    expect(byKey.json()).toEqual(byId.json());
    expect(byId.json()).toMatchObject({ id, key: 'clip', name: 'My clip', frameRate: 30, segments: 6 });
    const plain = await cli('video', 'show', 'clip');
    expect(plain.code).toBe(0);
    expect(plain.stdout).toBe(
      [
        `video  ${id}`,
        '  key        clip',
        '  status     INGESTED',
        '  name       My clip',
        '  picture    320x180 @ 30 fps, with audio',
        '  duration   10.000 s in 6 segments',
        '  forensic   no',
        '',
      ].join('\n'),
    );
  });

  it('fails with VIDEO_NOT_FOUND (exit 2) for an unknown id or key', async () => {
    const json = await cli('--json', 'video', 'show', 'nope');
    expect(json.code).toBe(2);
    expect(json.json()).toEqual({ error: { code: 'VIDEO_NOT_FOUND', message: 'no video with id or key "nope"', hint: 'See `wmark video list`.' } });
    const plain = await cli('video', 'show', 'nope');
    expect(plain.code).toBe(2);
    expect(plain.stdout).toBe('');
    expect(plain.stderr).toBe('error: no video with id or key "nope"\nhint: See `wmark video list`.\n');
  });
});
