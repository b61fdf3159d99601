// Watermark jobs: identity and idempotency, expiration rules (docs/settings.md), containers added later, published HLS
// structure, failures and retries, resume after SIGKILL, --no-wait.
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli.js';
import { collected, type Spawned } from '../../harness/cli-helpers.js';
import { type TestEngine, testEngine, watermarkDir } from '../../harness/engine.js';
import { fixture, flat, REPO, tempDir } from '../../harness/fixtures.js';
import { startProcess } from '../../harness/start-process.js';
import { isWmarkError, type WmarkError } from '../../src/core/errors.js';
import { segmentFrameCounts } from '../../src/core/plan/segment-timing.js';
import { linkExpirations, watermarkBody } from '../../src/engine/app/api-bodies.js';
import { MP4_NAME } from '../../src/engine/data-folder/layout.js';
import type { VideoRecord } from '../../src/engine/state/state-store.js';
import { requestWatermark } from '../../src/engine/watermark/request.js';
import { runWatermarkJob } from '../../src/engine/watermark/watermark-job.js';
import { decodeFrame, decodesCleanly, diffBox, videoPackets } from '../helpers/media.js';
import {
  compareRegion,
  durationOf,
  ffmpegWrapper,
  ingestFixture,
  loggedEncodes,
  meanRgb,
  parsePlaylist,
  renderWith,
  SMALL,
  settingsOf,
} from '../helpers/watermark-helpers.js';

const KEY = 'jobs';
const START = Date.UTC(2030, 0, 1);
let clock = START;
let engine: TestEngine;
let video: VideoRecord;

beforeAll(async () => {
  engine = await testEngine({ now: () => clock });
  video = await ingestFixture(engine, await flat('336699', 12), KEY);
});
afterAll(async () => await engine?.dispose());

function segmentFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => /^seg_\d+\.ts$/.test(f))
    .sort();
}

function fingerprint(dir: string): Record<string, { ino: number; mtimeMs: number; size: number }> {
  return Object.fromEntries(
    segmentFiles(dir).map((f) => {
      const s = statSync(path.join(dir, f));
      return [f, { ino: s.ino, mtimeMs: s.mtimeMs, size: s.size }];
    }),
  );
}

function allFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' });
}

/** The error a function throws (or its promise rejects with), failing the test when it does not. */
async function thrown(fn: () => unknown): Promise<WmarkError> {
  try {
    await fn();
  } catch (error) {
    if (isWmarkError(error)) return error;
    throw error;
  }
  throw new Error('expected an error');
}

describe('identity and idempotency', () => {
  const original = {
    content: 'same request',
    x: 0.9,
    y: 0.1,
    align: 'RIGHT',
    verticalAlign: 'TOP',
    fontColor: 'FF8800',
    shadowColor: '112233',
    shadowOpacity: 0.33,
  };

  it('the same request again, spelled with aliases, lowercase and prefixed colours, returns the same watermark and encodes nothing', async () => {
    const encodes0 = engine.runner.encodes();
    const first = await renderWith(engine, KEY, [original]);
    expect(first.request.created).toBe(true);
    expect(first.record.status).toBe('READY');
    expect(engine.runner.encodes() - encodes0).toBe(video.segments.length);
    const files = fingerprint(first.dir);

    const calls = engine.runner.calls.length;
    const respellings = [
      [{ ...original }],
      [
        {
          type: 'text',
          content: 'same request',
          x: 0.9,
          y: 0.1,
          horizontalAlignment: 'right',
          verticalAlignment: 'top',
          fontColor: '#ff8800',
          shadowColor: '0x112233',
          shadowOpacity: 0.33,
        },
      ],
      // Defaults given explicitly are the same setting.
      [{ ...original, fontSize: 0.05, fontOpacity: 0.3, shadowOffsetX: 0.08, shadowOffsetY: 0.08 }],
    ];
    for (const settings of respellings) {
      const again = await renderWith(engine, KEY, settings);
      expect(again.record.id).toBe(first.record.id);
      expect(again.request.created).toBe(false);
      expect(again.record.status).toBe('READY');
    }
    // Not one ffmpeg process, let alone an encode, and the published files are untouched.
    expect(engine.runner.calls.length).toBe(calls);
    expect(fingerprint(first.dir)).toEqual(files);
  });

  it('a slightly changed setting (shadowOpacity 0.33 -> 0.34) is a new watermark and is encoded', async () => {
    const first = await renderWith(engine, KEY, [original]);
    const encodes = engine.runner.encodes();
    const changed = await renderWith(engine, KEY, [{ ...original, shadowOpacity: 0.34 }]);
    expect(changed.record.id).not.toBe(first.record.id);
    expect(changed.request.created).toBe(true);
    expect(engine.runner.encodes() - encodes).toBe(video.segments.length);
    expect(segmentFiles(changed.dir)).toHaveLength(video.segments.length);
  });
});

describe('expiration', () => {
  const setting = { content: 'expiring', x: 0.5, y: 0.3 };
  const request = async (raw: Record<string, unknown>, expirationSeconds?: number) =>
    await requestWatermark(engine, { video: { key: KEY }, settings: settingsOf([raw]), containers: ['m3u8'], expirationSeconds });
  const firstExpiration = START / 1000 + 3600;

  it('(1) an expiration given with the first request is stored, and caps the signed URLs', async () => {
    clock = START;
    const r = await request(setting, firstExpiration);
    expect(r.created).toBe(true);
    expect(r.watermark.expiration).toBe(firstExpiration * 1000);
    const done = (await runWatermarkJob(engine, r.watermark.id))!;
    expect((await engine.store.getWatermark(done.id))!.expiration).toBe(firstExpiration * 1000);
    expect(linkExpirations(done, '2.0', clock).media).toBeLessThanOrEqual(firstExpiration * 1000);
    expect(watermarkBody(engine, done, { baseUrl: 'http://127.0.0.1:8080', api: '2.0' }).expiration).toBe(firstExpiration * 1000);
  });

  it('(2) the same settings with another expiration keep the original one (expirationIgnored)', async () => {
    clock = START + 60_000;
    const later = await request(setting, firstExpiration + 86_400);
    expect(later.created).toBe(false);
    expect(later.expirationIgnored).toBe(true);
    expect(later.watermark.expiration).toBe(firstExpiration * 1000);
    expect((await engine.store.getWatermark(later.watermark.id))!.expiration).toBe(firstExpiration * 1000);
    // Repeating the original expiration, or giving none, is not "ignored".
    expect((await request(setting, firstExpiration)).expirationIgnored).toBe(false);
    expect((await request(setting)).expirationIgnored).toBe(false);
    expect((await engine.store.getWatermark(later.watermark.id))!.expiration).toBe(firstExpiration * 1000);
  });

  it('(3) a slightly changed setting is a new watermark with the new expiration', async () => {
    const newExpiration = firstExpiration + 7 * 86_400;
    const original = await request(setting);
    const changed = await request({ ...setting, y: 0.3001 }, newExpiration);
    expect(changed.created).toBe(true);
    expect(changed.watermark.id).not.toBe(original.watermark.id);
    expect(changed.watermark.expiration).toBe(newExpiration * 1000);
    await runWatermarkJob(engine, changed.watermark.id);
  });

  it('an expired watermark requested again is gone (WATERMARK_EXPIRED), while the changed one still works', async () => {
    clock = firstExpiration * 1000 + 1;
    const error = await thrown(() => request(setting));
    expect(error.code).toBe('WATERMARK_EXPIRED');
    expect(error.kind).toBe('gone');
    expect(error.httpStatus).toBe(410);
    // A new expiration cannot revive it either.
    expect((await thrown(() => request(setting, firstExpiration + 30 * 86_400))).code).toBe('WATERMARK_EXPIRED');
    const changed = await request({ ...setting, y: 0.3001 });
    expect(changed.created).toBe(false);
    expect(changed.watermark.status).toBe('READY');
    clock = START;
  });
});

describe('mp4 added later', () => {
  it('keeps the id and joins the mp4 from the finished segments by stream copy', async () => {
    const settings = [{ content: 'mp4 later', fontSize: 0.1, fontOpacity: 1 }];
    const first = await renderWith(engine, KEY, settings, { containers: ['m3u8'] });
    expect(first.record.containers).toEqual(['m3u8']);
    expect(existsSync(path.join(first.dir, MP4_NAME))).toBe(false);
    const files = fingerprint(first.dir);

    const calls = engine.runner.calls.length;
    const second = await renderWith(engine, KEY, settings, { containers: ['m3u8', 'mp4'] });
    expect(second.record.id).toBe(first.record.id);
    expect(second.request.created).toBe(false);
    expect(second.record.status).toBe('READY');
    expect(second.record.containers).toEqual(['m3u8', 'mp4']);
    const newCalls = engine.runner.calls.slice(calls);
    expect(newCalls.filter((c) => c.args.includes('libx264'))).toEqual([]);
    expect(newCalls).toHaveLength(1);
    expect(newCalls[0]!.args.join(' ')).toContain('-c copy');
    expect(fingerprint(first.dir)).toEqual(files);

    const mp4 = path.join(second.dir, MP4_NAME);
    await decodesCleanly(mp4);
    const total = video.segments.reduce((a, b) => a + b, 0);
    expect(Math.abs((await durationOf(mp4)) - total)).toBeLessThan(0.1);
    expect(await videoPackets(mp4)).toHaveLength(Math.round(total * 30));
    // The very same pictures as the HLS output, watermark included.
    const fromMp4 = await decodeFrame(mp4, 5, SMALL);
    const fromHls = await decodeFrame(second.playlist, 5, SMALL);
    const bg = meanRgb(fromHls, { x0: 0, y0: 0, x1: 5, y1: 5 });
    expect(diffBox(fromMp4, bg)).toBeDefined();
    expect(compareRegion(fromMp4, fromHls, { x0: 0, y0: 0, x1: SMALL.width - 1, y1: SMALL.height - 1 }).maxBlock).toBeLessThan(1);
  });
});

describe('published HLS', () => {
  it('the playlist parses with the planned segments, and every segment decodes alone from a keyframe', async () => {
    const r = await renderWith(engine, KEY, [{ content: 'structure' }]);
    const playlist = parsePlaylist(r.playlist);
    expect(playlist.endList).toBe(true);
    expect(playlist.targetDuration).toBe(4);
    expect(playlist.segments.map((s) => s.uri)).toEqual(video.segments.map((_, i) => `seg_${String(i).padStart(5, '0')}.ts`));
    // 12 s at 30 fps: the lead segments (15, 15, 30, 60 frames), then 4-s GOPs of 120 frames.
    expect(playlist.segments.map((s) => Math.round(s.duration * 30))).toEqual(segmentFrameCounts({ num: 30, den: 1 }, 12 * 30, true));
    expect(playlist.segments).toHaveLength(6);
    for (const [i, s] of playlist.segments.entries()) expect(s.duration).toBeCloseTo(video.segments[i]!, 3);
    expect(playlist.segments.reduce((a, s) => a + s.duration, 0)).toBeCloseTo(12, 1);

    let expectedStart: number | undefined;
    for (const [i, s] of playlist.segments.entries()) {
      const file = path.join(r.dir, s.uri);
      await decodesCleanly(file);
      const packets = await videoPackets(file);
      expect(packets[0]!.keyframe, `segment ${i} starts with a keyframe`).toBe(true);
      expect(packets.filter((p) => p.keyframe)).toHaveLength(1);
      expect(packets).toHaveLength(Math.round(s.duration * 30));
      // Timestamps continue across segments: the segments join into one timeline.
      if (expectedStart !== undefined) expect(packets[0]!.pts).toBeCloseTo(expectedStart, 2);
      expectedStart = packets[0]!.pts + s.duration;
    }
  });
});

describe('segments finishing out of order', () => {
  it('at the same moment, last one first, still leave a complete, ended playlist once READY', async () => {
    // Its own engine on a tiny mute 16 s clip (7 segments: 0.5, 0.5, 1, 2, 4, 4, 4 s): the opening covering 8 s (segments
    // 0-4) renders one segment at a time, then the last two race on two workers.
    const e = await testEngine({ workers: 2 });
    try {
      const tiny = await fixture({ kind: 'flat', color: '336699', width: 64, height: 36, seconds: 16, fps: 30, audio: false });
      const v = await ingestFixture(e, tiny, 'tiny');
      expect(v.segments).toEqual([0.5, 0.5, 1, 2, 4, 4, 4]);
      const inner = e.runner.ffmpeg;
      let held: (() => void)[] = [];
      /** Runs whose two pool renders really finished together (the race this test is about). */
      let races = 0;
      const release = () => {
        const batch = held.reverse();
        held = [];
        for (const resolve of batch) resolve();
      };
      // Single-threaded (pool) renders are held until both have finished, then handed back together, the later segment first.
      e.runner.ffmpeg = async (args, options) => {
        const result = await inner(args, options);
        const poolRender = args.some((a) => a.endsWith('.ts.part')) && args[args.indexOf('-threads') + 1] === '1';
        if (poolRender) {
          await new Promise<void>((resolve) => {
            held.push(resolve);
            if (held.length === 2) {
              races++;
              release();
            } else setTimeout(release, 2000);
          });
        }
        return result;
      };
      // Which publish lands last is up to the file system; without ordering, about one run in three went wrong.
      for (let i = 0; i < 12; i++) {
        const r = await renderWith(e, 'tiny', [{ content: `out of order ${i}` }]);
        expect(r.record.status).toBe('READY');
        const playlist = parsePlaylist(r.playlist);
        expect(playlist.segments, `run ${i}`).toHaveLength(v.segments.length);
        expect(playlist.endList, `run ${i}`).toBe(true);
      }
      expect(races, 'runs whose last two segments were handed back together').toBeGreaterThan(0);
    } finally {
      await e.dispose();
    }
  });
});

describe('ffmpeg failure', () => {
  it("marks the watermark FAILED with ffmpeg's reason (an engine error), and the next identical request retries and succeeds", async () => {
    const corrupt = path.join(engine.dataDir, 'not-a-video.ts');
    writeFileSync(corrupt, 'this is not an MPEG-TS segment\n'.repeat(200));
    const inner = engine.runner.ffmpeg;
    let failing = true;
    // The second segment's render reads a corrupt input, so the real ffmpeg fails on it.
    engine.runner.ffmpeg = (args, options) => {
      if (failing && args.some((a) => a.endsWith('seg_00001.ts.part'))) {
        const bad = [...args];
        bad[bad.indexOf('-i') + 1] = corrupt;
        return inner(bad, options);
      }
      return inner(args, options);
    };
    const settings = [{ content: 'fails once', y: 0.8 }];
    try {
      const request = await requestWatermark(engine, { video: { key: KEY }, settings: settingsOf(settings), containers: ['m3u8', 'mp4'] });
      const error = await runWatermarkJob(engine, request.watermark.id).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isWmarkError(error)).toBe(true);
      expect((error as WmarkError).kind).toBe('engine');
      expect((error as WmarkError).exitCode).toBe(6);
      const failed = (await engine.store.getWatermark(request.watermark.id))!;
      expect(failed.status).toBe('FAILED');
      expect(failed.error).toMatch(/Invalid data found/);
      expect((await engine.store.getJob(`watermark:${failed.id}`))!.status).toBe('failed');
      const dir = watermarkDir(engine, video.id, failed.id);
      expect(segmentFiles(dir)).not.toContain('seg_00001.ts');
      expect(existsSync(path.join(dir, MP4_NAME))).toBe(false);
      const survivors = fingerprint(dir);
      expect(Object.keys(survivors)).toContain('seg_00000.ts');

      failing = false;
      const encodes = engine.runner.encodes();
      const retry = await renderWith(engine, KEY, settings, { containers: ['m3u8', 'mp4'] });
      expect(retry.record.id).toBe(failed.id);
      expect(retry.record.status).toBe('READY');
      expect(retry.record.error).toBeNull();
      // Only what was missing is rendered again; finished segments are kept as they were.
      expect(engine.runner.encodes() - encodes).toBe(video.segments.length - Object.keys(survivors).length);
      for (const [name, stat] of Object.entries(survivors)) expect(fingerprint(dir)[name]).toEqual(stat);
      expect(parsePlaylist(retry.playlist).segments).toHaveLength(video.segments.length);
      for (const f of segmentFiles(dir)) await decodesCleanly(path.join(dir, f));
      await decodesCleanly(path.join(dir, MP4_NAME));
    } finally {
      engine.runner.ffmpeg = inner;
    }
  });
});

describe('CLI jobs', () => {
  const CLI_KEY = 'cli-16s';
  let dir: string;
  let env: Record<string, string>;
  /** Segments of the 16 s clip: the lead (0.5, 0.5, 1, 2 s), then three 4-s GOPs. */
  let count: number;
  const children: Spawned[] = [];

  beforeAll(async () => {
    dir = tempDir('jobs-cli');
    env = { WMARK_CONFIG_DIR: path.join(dir, 'config'), WMARK_WORKERS: '1' };
    const ingest = await runCli(['--json', '--data-dir', path.join(dir, 'data'), 'ingest', await flat('336699', 16), '--key', CLI_KEY], { env, cwd: dir });
    expect(ingest.code, ingest.stderr).toBe(0);
    const segments = (await videoOf()).segments;
    expect(segments).toEqual(segmentFrameCounts({ num: 30, den: 1 }, 16 * 30, true).map((n) => n / 30));
    count = segments.length;
  });
  afterAll(async () => {
    for (const c of children) await c.stop({ signal: 'SIGKILL' });
    rmSync(dir, { recursive: true, force: true });
  });

  const dataDir = () => path.join(dir, 'data');
  /** A read-only look at the CLI's store and media folders. */
  async function withStore<T>(fn: (e: TestEngine) => Promise<T> | T): Promise<T> {
    const e = await testEngine({ dataDir: dataDir() });
    try {
      return await fn(e);
    } finally {
      await e.dispose();
    }
  }
  const videoOf = () => withStore(async (e) => (await e.store.getVideoByKey(CLI_KEY))!);
  const watermarkFolder = async (id: string) => {
    const video = await videoOf();
    return withStore((e) => watermarkDir(e, video.id, id));
  };

  function spawnCli(args: string[], extraEnv: Record<string, string>): Spawned {
    const cli = collected(
      startProcess({
        name: 'wmark',
        command: process.execPath,
        args: [path.join(REPO, 'bin', 'wmark.js'), '--data-dir', dataDir(), '--json', ...args],
        cwd: dir,
        detached: true,
        env: { ...process.env, ...env, ...extraEnv, CI: '1', NO_COLOR: '1' },
        keep: Number.POSITIVE_INFINITY,
      }),
    );
    children.push(cli);
    return cli;
  }

  it('an ffmpeg failure exits 6 with the reason; the same command again retries and succeeds', async () => {
    const log = path.join(dir, 'fail.log');
    const flag = path.join(dir, 'fail-now');
    writeFileSync(flag, '');
    const ffmpeg = ffmpegWrapper(dir, { log, failSegment: 'seg_00001.ts', failFlag: flag });
    const args = ['--json', '--data-dir', dataDir(), 'watermark', '--key', CLI_KEY, '--text', 'fails once in the CLI', '--containers', 'm3u8'];
    const failed = await runCli(args, { env: { ...env, WMARK_FFMPEG: ffmpeg }, cwd: dir });
    expect(failed.code).toBe(6);
    // FAILED is a result like READY: the resource with the job's reason, on stdout.
    const body = failed.json<{ status: string; error: string }>();
    expect(body.status).toBe('FAILED');
    expect(body.error).toContain('simulated encoder failure on seg_00001.ts');
    const id = await withStore(
      async (e) => (await e.store.listWatermarks()).find((w) => (w.settings[0] as { content: string }).content === 'fails once in the CLI')!.id,
    );
    expect(await withStore(async (e) => (await e.store.getWatermark(id))!)).toMatchObject({
      status: 'FAILED',
      error: expect.stringContaining('simulated encoder failure'),
    });

    rmSync(flag);
    const retried = await runCli(args, { env: { ...env, WMARK_FFMPEG: ffmpeg }, cwd: dir });
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.json()).toMatchObject({ id, status: 'READY' });
    expect(parsePlaylist(path.join(await watermarkFolder(id), 'video.m3u8')).segments).toHaveLength(count);
  });

  it('a SIGKILLed job resumes: finished segments are kept untouched and the rest is rendered', async () => {
    const log = path.join(dir, 'kill.log');
    // Each segment render waits a second first, so the job can be caught half-way.
    const ffmpeg = ffmpegWrapper(dir, { log, sleepPerSegment: 1 });
    const args = ['watermark', '--key', CLI_KEY, '--text', 'resume after SIGKILL'];
    const first = spawnCli(args, { WMARK_FFMPEG: ffmpeg });

    const watermarksOfVideo = path.join(dataDir(), 'media', 'watermarks', (await videoOf()).id);
    const finished = async (): Promise<{ folder: string; segments: string[] } | undefined> => {
      for (const id of existsSync(watermarksOfVideo) ? readdirSync(watermarksOfVideo) : []) {
        const folder = path.join(watermarksOfVideo, id);
        const segments = segmentFiles(folder);
        const isOurs = await withStore(
          async (e) => ((await e.store.getWatermark(id))?.settings[0] as { content?: string } | undefined)?.content === 'resume after SIGKILL',
        );
        if (isOurs && segments.length) return { folder, segments };
      }
      return undefined;
    };
    const deadline = Date.now() + 30_000;
    let caught = await finished();
    while (!caught && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      caught = await finished();
    }
    expect(caught, 'a first segment within 30 s').toBeDefined();
    process.kill(-first.child.pid!, 'SIGKILL');
    await first.done;

    const folder = caught!.folder;
    const kept = fingerprint(folder);
    const keptCount = Object.keys(kept).length;
    expect(keptCount).toBeGreaterThanOrEqual(1);
    expect(keptCount).toBeLessThan(count);
    expect(existsSync(path.join(folder, MP4_NAME))).toBe(false);
    const rendersBefore = loggedEncodes(log).length;

    const second = spawnCli(args, { WMARK_FFMPEG: ffmpeg });
    const result = await second.done;
    expect(result.code, result.stderr).toBe(0);
    const view = JSON.parse(result.stdout) as { id: string; status: string; files: { dir: string; mp4?: string } };
    expect(view.status).toBe('READY');
    expect(view.files.dir).toBe(folder);

    const after = fingerprint(folder);
    for (const [name, stat] of Object.entries(kept)) expect(after[name], `${name} untouched`).toEqual(stat);
    expect(Object.keys(after)).toHaveLength(count);
    // Only the missing segments were rendered by the second run.
    const renders = loggedEncodes(log)
      .slice(rendersBefore)
      .filter((l) => l.includes('.ts.part'));
    expect(renders).toHaveLength(count - keptCount);
    expect(allFiles(folder).filter((f) => f.includes('.part'))).toEqual([]);
    const playlist = parsePlaylist(path.join(folder, 'video.m3u8'));
    expect(playlist.endList).toBe(true);
    expect(playlist.segments).toHaveLength(count);
    for (const s of playlist.segments) await decodesCleanly(path.join(folder, s.uri));
    await decodesCleanly(path.join(folder, MP4_NAME));
  });

  it('--no-wait returns once the playlist is playable and the job finishes in the background', async () => {
    const log = path.join(dir, 'nowait.log');
    const ffmpeg = ffmpegWrapper(dir, { log, sleepPerSegment: 1 });
    const res = await runCli(['--json', '--data-dir', dataDir(), 'watermark', '--key', CLI_KEY, '--text', 'in the background', '--no-wait'], {
      env: { ...env, WMARK_FFMPEG: ffmpeg, PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir },
      cwd: dir,
    });
    expect(res.code, res.stderr).toBe(0);
    const view = res.json<{ id: string; status: string; files: { dir: string; m3u8?: string; complete: boolean } }>();
    // READY as the API says it (playable), while the local files say the rest is still being rendered.
    expect(view.status).toBe('READY');
    expect(view.files.complete).toBe(false);
    expect(view.files.m3u8).toBeDefined();
    const early = parsePlaylist(view.files.m3u8!);
    expect(early.segments.length).toBeGreaterThanOrEqual(1);
    expect(early.segments.length).toBeLessThan(count);
    expect(early.endList).toBeFalsy();

    const deadline = Date.now() + 60_000;
    let status = '';
    while (Date.now() < deadline) {
      status = await withStore(async (e) => (await e.store.getWatermark(view.id))!.status);
      if (status === 'READY' || status === 'FAILED') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe('READY');
    const final = parsePlaylist(view.files.m3u8!);
    expect(final.endList).toBe(true);
    expect(final.segments).toHaveLength(count);
    await decodesCleanly(path.join(view.files.dir, MP4_NAME));
  });
});
