// `wmark detect` on a machine that holds none of the title's state: a forensic title is ingested and a viewer's copy
// made by an engine whose records live in PostgreSQL and whose media lives in a folder standing for the farm's store;
// a CLI with an empty data folder of its own, given only the database and the store, names that viewer from a leak.
import { existsSync, linkSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli.js';
import { sandbox } from '../../harness/cli-helpers.js';
import { ingestVideo, type TestEngine, testEngine, watermarkDir } from '../../harness/engine.js';
import { natural, tempDir } from '../../harness/fixtures.js';
import { POSTGRES_MISSING, startPostgres, type TestPostgres } from '../../harness/postgres.js';
import { MP4_NAME } from '../../src/engine/data-folder/layout.js';
import { degrade } from '../helpers/forensic-helpers.js';

describe.skipIf(POSTGRES_MISSING !== undefined)(POSTGRES_MISSING ? `skipped: ${POSTGRES_MISSING}` : 'detect from another machine', () => {
  let pg: TestPostgres;
  let engine: TestEngine;
  let url: string;
  let work: string;

  beforeAll(async () => {
    work = tempDir('detect-elsewhere');
    pg = await startPostgres();
    url = await pg.createDatabase();
    engine = await testEngine({ dataDir: path.join(work, 'made-here'), database: url });
  }, 120_000);
  afterAll(async () => {
    await engine?.dispose();
    await pg?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('names the viewer of a leak through `--db` and `--media`, from an empty data folder', async () => {
    const source = path.join(work, 'natural-5min.mp4');
    linkSync(await natural(300), source);
    const { video } = await ingestVideo(engine, { source, key: 'elsewhere', enableForensic: true, forensicLayout: 'single' });
    const made = await runCli([
      '--data-dir',
      engine.dataDir,
      '--db',
      url,
      '--json',
      'watermark',
      '--key',
      'elsewhere',
      '--forensic',
      '4242',
      '--containers',
      'mp4',
    ]);
    expect(made.code, made.stderr).toBe(0);
    const id = made.json<{ id: string }>().id;
    const leak = await degrade(path.join(watermarkDir(engine, video.id, id), MP4_NAME), path.join(work, 'leak.mp4'), { crf: 30, scale: 0.5 });

    const box = sandbox('detect-elsewhere');
    try {
      const elsewhere = path.join(work, 'elsewhere');
      const argv = ['--data-dir', elsewhere, '--db', url, '--json', 'detect', leak, '--key', 'elsewhere'];
      // Without the store, the records are found but not the title's media: a clear error, no stack.
      const without = await runCli(argv, { cwd: box.cwd, env: { WMARK_CONFIG_DIR: box.configDir } });
      expect(without.code).not.toBe(0);
      expect(without.stderr + without.stdout).not.toMatch(/\n\s+at /);
      const found = await runCli([...argv, '--media', engine.paths.media], { cwd: box.cwd, env: { WMARK_CONFIG_DIR: box.configDir } });
      expect(found.code, found.stderr).toBe(0);
      const report = found.json<{ found: boolean; best: { payload: number }; accused: { watermarks: { id: string }[] }[] }>();
      expect(report.found).toBe(true);
      expect(report.best.payload).toBe(4242);
      expect(report.accused.map((a) => a.watermarks.map((w) => w.id))).toEqual([[id]]);
      // The machine that detected keeps no state of its own.
      expect(existsSync(path.join(elsewhere, 'wmark.db')) || existsSync(path.join(elsewhere, 'secret.key'))).toBe(false);
    } finally {
      box.dispose();
    }
  }, 900_000);
});
