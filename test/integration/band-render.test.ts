// Band rendering wired into wmark: a title ingested with the patched x264 gets its band media (the shared encode, the
// bands' source rows), a watermark that fits a band renders there (decoded: the shared encode outside the band, the
// mark inside it, at its place and colour), one that does not fit renders in full, and a band render that fails falls
// back to a full render and is counted. Skipped, saying why, without the patched x264.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestEngine, testEngine, testService, videoDir } from '../../harness/engine.js';
import { natural } from '../../harness/fixtures.js';
import { parseWatermarkOrder } from '../../src/core/api-requests.js';
import { Operations } from '../../src/engine/app/operations.js';
import { bandKeys, readBandMeta } from '../../src/engine/band/band-media.js';
import { mediaFile } from '../../src/engine/data-folder/layout.js';
import { embedded } from '../../src/engine/open/embedded.js';
import { LocalRenderer } from '../../src/engine/render/local-renderer.js';
import type { VideoRecord } from '../../src/engine/state/state-store.js';
import { renderStrategy } from '../../src/engine/watermark/band-strategy.js';
import { locateBandX264 } from '../../src/ffmpeg/locate-x264.js';
import type { ProcessRunner } from '../../src/ffmpeg/run-ffmpeg.js';
import { ServerMetrics } from '../../src/server/metrics.js';
import { FITS_BOTTOM_BAND, redPixels, SMALL_TITLE_BANDS, stripMd5s } from '../helpers/band-helpers.js';
import { decodeFrame, decodesCleanly, videoPackets } from '../helpers/media.js';
import { ingestFixture, renderWith, SMALL } from '../helpers/watermark-helpers.js';

const X264 = locateBandX264();
if (!X264) console.warn('band render tests skipped: no patched x264 (run scripts/build-x264.sh, or set WMARK_X264)');
const TITLE = X264 ? 'band rendering (patched x264)' : 'band rendering: skipped, no patched x264 (run scripts/build-x264.sh, or set WMARK_X264)';

const { width: W, height: H } = SMALL;
const FITS = FITS_BOTTOM_BAND;
const md5s = (file: string, crop: { y: number; h: number }) => stripMd5s(file, crop, W);

describe.skipIf(!X264)(TITLE, () => {
  let engine: TestEngine;
  let video: VideoRecord;
  beforeAll(async () => {
    engine = await testEngine({ band: { x264: X264! } });
    video = await ingestFixture(engine, await natural(6), 'natural-6');
  });
  afterAll(async () => await engine?.dispose());

  it('renders in full, saying why, when band rendering is off', async () => {
    const off = await testEngine({ band: { off: 'band rendering off: patched x264 not found' } });
    try {
      await ingestFixture(off, await natural(2), 'natural-2');
      const r = await renderWith(off, 'natural-2', [FITS]);
      expect(await testService(off).operations.renderStrategy(r.record)).toEqual({ strategy: 'full', reason: 'band rendering off: patched x264 not found' });
      expect(off.renderer.bandStats()).toEqual({ rendered: 0, fallbacks: {} });
    } finally {
      await off.dispose();
    }
  });

  it('ingests the band media: the bands recorded, per working segment a shared segment on the same timing, frame types and rows', async () => {
    const meta = await readBandMeta(engine.media, video.id);
    expect(meta).toMatchObject({
      width: W,
      height: H,
      bands: SMALL_TITLE_BANDS,
    });
    expect(readFileSync(`${videoDir(engine, video.id)}/band/seg_00000.qp`, 'utf8')).toMatch(/^0 I -1\n1 P -1\n/);
    for (const k of [0, video.segments.length - 1]) {
      const shared = mediaFile(engine.paths, bandKeys.shared(video.id, k));
      const working = mediaFile(engine.paths, `videos/${video.id}/seg_${String(k).padStart(5, '0')}.ts`);
      const [a, b] = [await videoPackets(shared), await videoPackets(working)];
      expect(a.map((p) => p.pts.toFixed(3))).toEqual(b.map((p) => p.pts.toFixed(3)));
    }
  });

  /** A fitting mark at the bottom (rows 144-180, the picture's last 36 of 48 band rows) and one at the top (0-48). */
  const PLACES = [
    { where: 'bottom', setting: FITS, band: { y: 144, h: 36 }, rest: [{ y: 0, h: 144 }], rows: [144, Math.ceil(0.985 * H)] },
    {
      where: 'top',
      setting: { ...FITS, y: 0.015, verticalAlign: 'TOP' },
      band: { y: 0, h: 48 },
      rest: [{ y: 48, h: H - 48 }],
      rows: [Math.floor(0.015 * H), 48],
    },
  ];

  it.each(PLACES)('renders a fitting text watermark in the $where band: the shared encode outside it, the mark inside it', async (place) => {
    const before = engine.renderer.bandStats().rendered;
    const r = await renderWith(engine, 'natural-6', [place.setting]);
    expect(r.record.status).toBe('READY');
    const strategy = await testService(engine).operations.renderStrategy(r.record);
    const rows = `${place.band.y}-${place.band.y + place.band.h}`;
    expect(strategy).toEqual({
      strategy: 'band',
      reason: expect.stringMatching(new RegExp(`^the mark reaches rows \\d+-\\d+, inside the band at rows ${rows}$`)),
    });
    expect(engine.renderer.bandStats()).toEqual({ rendered: before + video.segments.length, fallbacks: {} });
    for (const k of [0, video.segments.length - 1]) {
      const out = `${r.dir}/seg_${String(k).padStart(5, '0')}.ts`;
      await decodesCleanly(out);
      const shared = mediaFile(engine.paths, bandKeys.shared(video.id, k));
      for (const crop of place.rest) expect(await md5s(out, crop)).toEqual(await md5s(shared, crop));
      expect(await md5s(out, place.band)).not.toEqual(await md5s(shared, place.band));
    }
    // The mark's red pixels: inside the band, centred, nowhere else.
    const frame = await decodeFrame(r.playlist, 1, SMALL);
    const red = redPixels(frame);
    expect(red.length).toBeGreaterThan(40);
    expect(Math.min(...red.map((p) => p.y))).toBeGreaterThanOrEqual(place.rows[0]!);
    expect(Math.max(...red.map((p) => p.y))).toBeLessThanOrEqual(place.rows[1]!);
    const cx = red.reduce((n, p) => n + p.x, 0) / red.length;
    expect(Math.abs(cx - W / 2)).toBeLessThan(12);
  });

  it('renders a mark in the centre, or moving across the frame, in full, and says why', async () => {
    for (const setting of [
      { content: 'centre' },
      { ...FITS, y: 0.1, verticalAlign: 'TOP', animation: { type: 'MOVE', toX: 0.5, toY: 0.96, startTime: 0, endTime: 5 } },
    ]) {
      const before = engine.renderer.bandStats().rendered;
      const r = await renderWith(engine, 'natural-6', [setting]);
      expect(r.record.status).toBe('READY');
      expect(await renderStrategy(engine, r.record, video)).toMatchObject({
        strategy: 'full',
        reason: expect.stringMatching(/^the mark reaches rows \d+-\d+, outside the band/),
      });
      expect(engine.renderer.bandStats().rendered).toBe(before);
    }
  });

  it('renders in full a watermark asked for with --full-render, and says so', async () => {
    const service = testService(engine);
    const order = parseWatermarkOrder({ key: 'natural-6', settings: [{ type: 'TEXT', ...FITS, content: 'forced' }] }, { api: '2.0', nowMs: engine.now() });
    const created = await service.watermarks.request(order, { api: '2.0', fullRender: true });
    const id = created.resource.id!;
    expect(await service.operations.renderStrategy((await engine.store.getWatermark(id))!)).toEqual({
      strategy: 'full',
      reason: 'asked for a full render (--full-render)',
    });
    await expect.poll(async () => (await engine.store.getWatermark(id))?.status, { timeout: 60_000, interval: 200 }).toBe('READY');
    const out = mediaFile(engine.paths, `watermarks/${video.id}/${id}/seg_00000.ts`);
    const shared = mediaFile(engine.paths, bandKeys.shared(video.id, 0));
    expect(await md5s(out, { y: 48, h: 96 })).not.toEqual(await md5s(shared, { y: 48, h: 96 }));
    // The marker that asks for the full render stays the engine's, like its drawings (.draw/): a copy of the outputs
    // holds the outputs alone.
    const kept = readdirSync(path.dirname(out));
    expect(kept).toContain('full-render.txt');
    const copied = await service.watermarks.export(id, mkdtempSync(path.join(os.tmpdir(), 'wmark-out-')));
    expect(readdirSync(copied).sort()).toEqual(kept.filter((name) => name !== 'full-render.txt' && !name.startsWith('.')).sort());
    expect(readdirSync(copied)).toContain('video.m3u8');
  });

  it('falls back to a full render, counted with its reason, when the band stream is corrupt', async () => {
    const lines: string[] = [];
    const corrupt = (runner: ProcessRunner): ProcessRunner => ({
      ...runner,
      x264: async (bin, args, options) => {
        const result = await runner.x264(bin, args, options);
        const out = args[args.indexOf('-o') + 1]!;
        const bytes = readFileSync(out);
        // Keep the parameter sets, garble what follows: the splice finds the band's slices unreadable or unlike.
        bytes.fill(0x5a, Math.min(bytes.length - 1, 40));
        writeFileSync(out, bytes);
        return result;
      },
    });
    const broken = await testEngine({
      band: { x264: X264! },
      deployment: async (parts) => {
        const base = await embedded(parts);
        const media = base.media as ConstructorParameters<typeof LocalRenderer>[0]['media'];
        const renderer = new LocalRenderer({
          media,
          runner: corrupt(parts.runner),
          fontFile: parts.tools.font.path,
          encode: parts.encode,
          threads: parts.workers,
          band: { x264: X264!, log: (line) => lines.push(line) },
        });
        return { ...base, renderer };
      },
    });
    try {
      const v = await ingestFixture(broken, await natural(6), 'natural-6');
      const r = await renderWith(broken, 'natural-6', [FITS]);
      expect(r.record.status).toBe('READY');
      const stats = broken.renderer.bandStats();
      expect(stats.rendered).toBe(0);
      expect(Object.values(stats.fallbacks).reduce((a, b) => a + b, 0)).toBe(v.segments.length);
      expect(Object.keys(stats.fallbacks).every((code) => ['SPLICE_MISMATCH', 'BITSTREAM_INVALID'].includes(code))).toBe(true);
      expect(lines[0]).toMatch(/^band render of .*seg_\d+\.ts failed \((SPLICE_MISMATCH|BITSTREAM_INVALID): .*\); rendering it in full$/);
      await decodesCleanly(`${r.dir}/seg_00000.ts`);
      // /metrics counts them by reason.
      const metrics = new ServerMetrics(new Operations(broken));
      const { body } = await metrics.scrape();
      metrics.close();
      const counted = [...body.matchAll(/^wmark_band_fallbacks_total\{reason="(\w+)"\} (\d+)$/gm)].reduce((n, m) => n + Number(m[2]), 0);
      expect(counted).toBe(v.segments.length);
      expect(body).toMatch(/^wmark_band_renders_total 0$/m);
    } finally {
      await broken.dispose();
    }
  });
});
