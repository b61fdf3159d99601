// The library entry (`connect` from 'wmark') on both services: the embedded engine on a data folder, and `wmark serve`
// on loopback with a client id and key. The same calls give answers of the same shape, and the marks are drawn.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { flat } from '../../harness/fixtures.js';
import { serveEngine, type TestServer } from '../../harness/serve-helpers.js';
import { connect, WmarkError } from '../../src/index.js';
import { decodeFrame } from '../helpers/media.js';
import { type Box, colourBox, SMALL } from '../helpers/watermark-helpers.js';

const { width: W, height: H } = SMALL;

let engine: TestEngine;
let s: TestServer;
let clip: string;

beforeAll(async () => {
  engine = await testEngine();
  s = await serveEngine(engine);
  clip = await flat('336699', 4);
});
afterAll(async () => {
  await s?.close();
  await engine?.dispose();
});

const corner = (content: string) => ({ content, x: 0.05, y: 0.05, align: 'LEFT', verticalAlign: 'TOP', fontSize: 0.1, fontOpacity: 1, shadowOpacity: 0 });

/** White text at the top left of the first second: the mark, where the settings put it. */
async function expectCornerText(m3u8: string): Promise<Box> {
  const white = colourBox(await decodeFrame(m3u8, 1, SMALL), [255, 255, 255], 60);
  expect(white).toBeDefined();
  expect(white!.x0).toBeGreaterThanOrEqual(Math.floor(0.05 * W) - 2);
  expect([white!.x1 < W / 2, white!.y1 < H / 2]).toEqual([true, true]);
  return white!;
}

/** An answer's shape: its fields and its links' fields, values aside. */
const shape = (resource: object & { containers?: object }) => ({ fields: Object.keys(resource).sort(), links: Object.keys(resource.containers ?? {}).sort() });

describe('connect', () => {
  let localShape: ReturnType<typeof shape>;

  it('without a URL opens the embedded engine: ingest, a template, a watermark from it, waited for until complete', async () => {
    // Links name the `wmark serve` running on the same data folder, which serves what this engine rendered.
    const wm = await connect({ dataDir: engine.dataDir, publicUrl: s.url });
    try {
      expect([wm.mode, await wm.apiVersion()]).toEqual(['local', '2.0']);
      const video = await wm.ingest({ sourceUrl: clip, key: 'library-local' });
      expect(video).toMatchObject({ key: 'library-local', status: 'INGESTED', width: W, height: H });
      const template = await wm.template({ name: 'corner', settings: [corner('[%name%]')] });
      expect(template.placeholders).toEqual(['name']);
      const w = await wm.watermark(
        { key: 'library-local', settingsTemplateMapping: { id: template.id, mappings: { name: 'LOCAL' } }, containers: ['m3u8'] },
        { wait: 'complete' },
      );
      expect(w).toMatchObject({ status: 'READY', videoId: video.id });
      await expectCornerText(w.containers!.m3u8!);
      localShape = shape(w);
      expect((await wm.videos({ key: 'library-local' })).map((v) => v.id)).toEqual([video.id]);
    } finally {
      await wm.close();
    }
  });

  it('with a URL, client id and key talks to wmark serve over HTTP: the same calls, answers of the same shape', async () => {
    const wm = await connect({ url: s.url, clientId: s.cred.clientId, apiKey: s.cred.apiKey });
    try {
      expect([wm.mode, await wm.apiVersion()]).toEqual(['remote', '2.0']);
      const video = await wm.ingest({ sourceUrl: clip, key: 'library-remote' });
      expect(video).toMatchObject({ key: 'library-remote', status: 'INGESTED' });
      const w = await wm.watermark({ key: 'library-remote', settings: [corner('REMOTE')], containers: ['m3u8'] });
      expect(w).toMatchObject({ status: 'READY', videoId: video.id });
      await expectCornerText(w.containers!.m3u8!);
      expect(shape(w)).toEqual(localShape);
      // Not waiting answers at once; asking again is the same watermark.
      const again = await wm.watermark({ key: 'library-remote', settings: [corner('REMOTE')], containers: ['m3u8'] }, { wait: false });
      expect(again.id).toBe(w.id);
      expect((await wm.templates()).map((t) => t.id)).toContain('viewer-corner');
    } finally {
      await wm.close();
    }
  });

  it('refuses a bad URL at once, and a wrong key at the first call, with WmarkError codes', async () => {
    await expect(connect({ url: 'ftp://example.com' })).rejects.toMatchObject({ code: 'BAD_REMOTE' });
    const wrong = await connect({ url: s.url, clientId: s.cred.clientId, apiKey: `${s.cred.apiKey.slice(0, -4)}AAAA` });
    const error = await wrong.videos().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WmarkError);
    expect(error).toMatchObject({ code: 'AUTH_INVALID' });
    await wrong.close();
  });
});
