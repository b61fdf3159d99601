// A local source file stands for its bytes, not only its path: `wmark ingest` of the same unchanged file is the same
// video, the file edited in place is another source (refused under the key, as another path is, until --replace), and
// the watermarks of the old bytes never play as the new ones'. Then the engine's own edges: a file edited while its
// ingest waits, the same rule over HTTP, and videos recorded before sources were hashed. Real clips (320x180, 2 s), real ffmpeg, real SQLite.
import { copyFileSync, rmSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, runCli } from '../../harness/cli.js';
import { ingestVideo, type TestEngine, testEngine } from '../../harness/engine.js';
import { flat, tempDir } from '../../harness/fixtures.js';
import { call, ingestOverHttp, serveEngine } from '../../harness/serve-helpers.js';
import { runIngestJob } from '../../src/engine/ingest/ingest-job.js';
import { recordVideo } from '../../src/engine/ingest/register.js';
import { hashFile } from '../../src/engine/ingest/source-identity.js';
import { dbRows, rejection } from '../helpers/ingest-helpers.js';
import { decodeFrame } from '../helpers/media.js';
import { maxChannelDiff, meanRgb, type Rgb, SMALL } from '../helpers/watermark-helpers.js';

const BLUE: Rgb = [0x33, 0x66, 0x99];
const RED: Rgb = [0xcc, 0x33, 0x33];
const hex = (c: Rgb) => c.map((v) => v.toString(16).padStart(2, '0')).join('');
/** A 2 s 320x180 clip of one colour. */
const clip = (colour: Rgb) => flat(hex(colour), 2);

describe('wmark ingest of a local file that is edited in place', () => {
  let dir: string;
  let source: string;
  const cli = (...argv: string[]): Promise<CliResult> =>
    runCli(['--json', '--data-dir', path.join(dir, 'data'), ...argv], { cwd: dir, env: { WMARK_CONFIG_DIR: path.join(dir, 'config') } });

  /** A watermark for alice on the video under "clip", and the colour of its picture away from the text at 1 s. */
  async function watermark(): Promise<{ id: string; created: boolean; colour: Rgb }> {
    const r = await cli('watermark', '--key', 'clip', '--text', 'alice', '--containers', 'm3u8');
    expect(r.code, r.stderr).toBe(0);
    const w = r.json<{ id: string; created: boolean; status: string; files: { m3u8: string } }>();
    expect(w.status).toBe('READY');
    const frame = await decodeFrame(w.files.m3u8, 1, SMALL);
    return { id: w.id, created: w.created, colour: meanRgb(frame, { x0: 8, y0: 8, x1: 60, y1: 40 }) };
  }

  beforeAll(async () => {
    dir = tempDir('edited-source');
    source = path.join(dir, 'clip.mp4');
    copyFileSync(await clip(BLUE), source);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is the same video while unchanged, refused under its key once edited, and a new video with --replace', async () => {
    const first = await cli('ingest', 'clip.mp4', '--key', 'clip');
    expect(first.code, first.stderr).toBe(0);
    const v1 = first.json<{ id: string; status: string }>();
    expect(v1.status).toBe('INGESTED');
    expect(dbRows(path.join(dir, 'data', 'wmark.db'), 'SELECT source_sha256 FROM videos')).toEqual([{ source_sha256: await hashFile(source) }]);
    const old = await watermark();
    expect(old.created).toBe(true);
    expect(maxChannelDiff(old.colour, BLUE)).toBeLessThanOrEqual(6);

    // Unchanged: the same video, nothing encoded (as before sources were hashed).
    const again = await cli('ingest', 'clip.mp4', '--key', 'clip');
    expect(again.code, again.stderr).toBe(0);
    expect(again.json()).toEqual(first.json());
    expect(again.stderr).toContain(`already ingested as ${v1.id}; nothing to do`);

    // Edited in place (made again with other content): another source, refused under the key as another path is.
    copyFileSync(await clip(RED), source);
    const edited = await cli('ingest', 'clip.mp4', '--key', 'clip');
    expect(edited.code).toBe(2);
    expect(edited.json()).toEqual({
      error: {
        code: 'KEY_EXISTS',
        message: `the key "clip" names ${source} as it was when ingested, and the file has changed since`,
        hint: 'Choose another key, or re-ingest under "clip" with `wmark ingest <source> --key clip --replace` (the old video, its watermarks and their links are deleted).',
      },
    });
    // Without --key the key comes from the file name, and is refused the same way, saying where it came from.
    const byName = await cli('ingest', 'clip.mp4');
    expect(byName.code).toBe(2);
    expect(byName.json().error).toMatchObject({
      code: 'KEY_EXISTS',
      message: expect.stringContaining('has changed since (the key was taken from the file name)'),
    });
    // The key still names the video of the old bytes, and its watermark is still theirs.
    expect((await cli('video', 'list')).json().map((v: { id: string }) => v.id)).toEqual([v1.id]);
    expect(await watermark()).toEqual({ ...old, created: false });

    // --replace: the edited file is a new video, its watermark a new one drawn on the new picture; the old one is gone.
    const replaced = await cli('ingest', 'clip.mp4', '--key', 'clip', '--replace');
    expect(replaced.code, replaced.stderr).toBe(0);
    const v2 = replaced.json<{ id: string; status: string }>();
    expect(v2.status).toBe('INGESTED');
    expect(v2.id).not.toBe(v1.id);
    expect(replaced.stderr).toContain(`replaced video ${v1.id} (${source}) and its 1 watermark(s)`);
    const fresh = await watermark();
    expect(fresh.created).toBe(true);
    expect(fresh.id).not.toBe(old.id);
    expect(maxChannelDiff(fresh.colour, RED)).toBeLessThanOrEqual(6);
    const oldView = await cli('watermark', 'view', old.id);
    expect(oldView.json().error.code).toBe('WATERMARK_NOT_FOUND');
    // And the edited file, unchanged since, is now the same video again.
    const settled = await cli('ingest', 'clip.mp4', '--key', 'clip');
    expect(settled.json<{ id: string }>().id).toBe(v2.id);
    // A file gone since has nothing to compare: the key's video stands, as before sources were hashed.
    rmSync(source);
    const fileGone = await cli('ingest', 'clip.mp4', '--key', 'clip');
    expect([fileGone.code, fileGone.json<{ id: string }>().id]).toEqual([0, v2.id]);
  });
});

describe('the ingest engine and a changing source file', () => {
  let engine: TestEngine;
  let dir: string;
  beforeAll(async () => {
    engine = await testEngine();
    dir = tempDir('edited-source-engine');
  });
  afterAll(async () => {
    await engine.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('fails an ingest whose file was edited after it was registered, and ingests the edited file when asked again', async () => {
    const source = path.join(dir, 'waiting.mp4');
    copyFileSync(await clip(BLUE), source);
    const { video } = await recordVideo(engine, { source, key: 'waiting' });
    copyFileSync(await clip(RED), source);
    engine.runner.calls.length = 0;
    const error = await rejection(runIngestJob(engine, video.id));
    expect(error.code).toBe('SOURCE_CHANGED');
    expect(error.message).toBe(`${source} has changed since it was registered as video ${video.id}, so it was not ingested`);
    expect(engine.runner.calls).toEqual([]);
    expect(await engine.store.getVideo(video.id)).toMatchObject({ status: 'FAILED_ENCODING', error: error.message });

    const again = await ingestVideo(engine, { source, key: 'waiting' });
    expect(again.created).toBe(true);
    expect(again.video).toMatchObject({ key: 'waiting', status: 'INGESTED', sourceSha256: await hashFile(source) });
  });

  it('answers POST /2.0/videos for an unchanged path with the same video (200), and for the edited file with 409', async () => {
    const source = path.join(dir, 'posted.mp4');
    copyFileSync(await clip(BLUE), source);
    const server = await serveEngine(engine);
    try {
      const { created, video } = await ingestOverHttp(server.url, server.v2, source, 'posted');
      expect(created.status).toBe(201);
      const again = await call(server.url, 'POST', '/2.0/videos', { headers: server.v2, body: { sourceUrl: source, key: 'posted' } });
      expect([again.status, again.json.id, again.json.status]).toEqual([200, video.id, 'INGESTED']);
      copyFileSync(await clip(RED), source);
      const edited = await call(server.url, 'POST', '/2.0/videos', { headers: server.v2, body: { sourceUrl: source, key: 'posted' } });
      expect(edited.status).toBe(409);
      expect(edited.json).toMatchObject({
        code: 'KEY_EXISTS',
        message: `the key "posted" names ${source} as it was when ingested, and the file has changed since`,
      });
    } finally {
      await server.close();
    }
  });

  it('takes an unhashed video (recorded before sources were hashed) as its file while the file is older than it, and records the hash', async () => {
    const source = path.join(dir, 'older.mp4');
    copyFileSync(await clip(BLUE), source);
    const { video } = await ingestVideo(engine, { source, key: 'older' });
    const unhashed = async () => {
      await engine.store.updateVideo(video.id, { sourceSha256: null });
      expect((await engine.store.getVideo(video.id))?.sourceSha256).toBeNull();
    };
    const writtenAt = (ms: number) => utimesSync(source, new Date(ms), new Date(ms));

    // Not written since the video was recorded: the same video, and from now on its bytes are known.
    await unhashed();
    writtenAt(video.createdOn - 60_000);
    engine.runner.calls.length = 0;
    const same = await ingestVideo(engine, { source, key: 'older' });
    expect([same.created, same.video.id, same.video.sourceSha256]).toEqual([false, video.id, await hashFile(source)]);
    expect(engine.runner.calls).toEqual([]);

    // Written since: nothing says the bytes are those ingested, so it counts as changed.
    await unhashed();
    writtenAt(video.createdOn + 60_000);
    const changed = await rejection(ingestVideo(engine, { source, key: 'older' }));
    expect(changed.code).toBe('KEY_EXISTS');
    expect((await engine.store.getVideo(video.id))?.sourceSha256).toBeNull();
  });
});
