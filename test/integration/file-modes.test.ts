// Private state (README.md, "Security model"): the data folder, database (-wal, -shm), secret and media are 0700/0600,
// created that way by a real ingest and watermark render (ffmpeg writes the media), and a data folder left open by an
// older version is tightened when the engine opens.
import { chmodSync, existsSync, lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { flat, tempDir } from '../../harness/fixtures.js';
import { exportWatermark } from '../../src/engine/watermark/manage.js';
import { requestWatermark } from '../../src/engine/watermark/request.js';
import { runWatermarkJob } from '../../src/engine/watermark/watermark-job.js';
import { ingestFixture, settingsOf } from '../helpers/watermark-helpers.js';

/** Every entry below `root` (root included) with its permission bits, symlinks skipped. */
function modes(root: string): Map<string, number> {
  const out = new Map<string, number>([[root, lstatSync(root).mode & 0o777]]);
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, e.name);
      if (e.isSymbolicLink()) continue;
      out.set(full, lstatSync(full).mode & 0o777);
      if (e.isDirectory()) walk(full);
    }
  };
  walk(root);
  return out;
}

function expectPrivate(root: string): void {
  const all = modes(root);
  const wrong = [...all]
    .filter(([file, mode]) => mode !== (lstatSync(file).isDirectory() ? 0o700 : 0o600))
    .map(([f, m]) => `${path.relative(root, f) || '.'} ${m.toString(8)}`);
  expect(wrong).toEqual([]);
}

describe('file modes', () => {
  let dataDir: string;
  let engine: TestEngine;
  const oldUmask = process.umask();

  beforeAll(async () => {
    // As a user's shell would start it: files 644, folders 755 unless wmark says otherwise.
    process.umask(0o022);
    dataDir = tempDir('modes');
    chmodSync(dataDir, 0o755);
    engine = await testEngine({ dataDir });
    const video = await ingestFixture(engine, await flat('884422', 4), 'modes');
    const r = await requestWatermark(engine, {
      video: { key: video.key },
      settings: settingsOf([{ type: 'text', content: 'for alice' }]),
      containers: ['m3u8', 'mp4'],
    });
    await runWatermarkJob(engine, r.watermark.id);
  });
  afterAll(async () => {
    await engine?.dispose();
    process.umask(oldUmask);
  });

  it('a new data folder and everything an ingest and a render create in it are 0700 / 0600', () => {
    for (const f of ['wmark.db', 'wmark.db-wal', 'wmark.db-shm', 'secret.key']) expect(existsSync(path.join(dataDir, f)), f).toBe(true);
    const all = modes(dataDir);
    expect(
      [...all.keys()].some((f) => f.endsWith('.ts')),
      'segments were rendered',
    ).toBe(true);
    expect(
      [...all.keys()].some((f) => f.endsWith('video.mp4')),
      'an mp4 was rendered',
    ).toBe(true);
    expectPrivate(dataDir);
  });

  it('a copy exported for the user (--out) gets the modes of the umask wmark started with, not the private ones', async () => {
    const id = (await engine.store.listWatermarks())[0]!.id;
    const out = tempDir('modes-out');
    const copied = await exportWatermark(engine, (await engine.store.getWatermark(id))!, out);
    const all = modes(copied);
    expect([...all.keys()].some((f) => f.endsWith('video.mp4'))).toBe(true);
    const wrong = [...all]
      .filter(([file, mode]) => mode !== (lstatSync(file).isDirectory() ? 0o755 : 0o644))
      .map(([f, m]) => `${path.relative(copied, f) || '.'} ${m.toString(8)}`);
    expect(wrong).toEqual([]);
    // The data folder itself stays private.
    expectPrivate(dataDir);
  });

  it('an existing open data folder is tightened when the engine opens', async () => {
    engine.close();
    for (const [file] of modes(dataDir)) chmodSync(file, lstatSync(file).isDirectory() ? 0o755 : 0o644);
    expect(lstatSync(path.join(dataDir, 'wmark.db')).mode & 0o777).toBe(0o644);
    engine = await testEngine({ dataDir });
    expectPrivate(dataDir);
    // Still a working engine.
    expect((await engine.store.getVideoByKey('modes'))?.status).toBe('INGESTED');
  });
});
