// Detection on a real title whose content repeats itself: ffmpeg's test pattern with grain and a hue that cycles every
// 31.4 s, at 320x180 (the size the suite affords), ingested with forensic marks. A 2-minute excerpt of a viewer's copy
// fits several places of the original about equally well; the payload must pick the right one and name the viewer,
// and the unmarked excerpt must name no one.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli.js';
import { ingestVideo, type TestEngine, testEngine, watermarkDir } from '../../harness/engine.js';
import { tempDir } from '../../harness/fixtures.js';
import { MP4_NAME } from '../../src/engine/data-folder/layout.js';
import { detectLeak } from '../../src/engine/forensic/detect.js';
import type { VideoRecord } from '../../src/engine/state/state-store.js';
import { degrade } from '../helpers/forensic-helpers.js';
import { ffmpegFixture } from '../helpers/ingest-helpers.js';

const VIEWER = 31337;

describe('detect on a test pattern that repeats itself', () => {
  let engine: TestEngine;
  let work: string;
  let video: VideoRecord;
  let copy: string;
  let source: string;

  beforeAll(async () => {
    work = tempDir('forensic-repeating');
    source = await ffmpegFixture('testsrc2-hue-310s.mp4', [
      ...['-f', 'lavfi', '-i', 'testsrc2=s=320x180:r=25', '-f', 'lavfi', '-i', 'sine=f=300:r=48000', '-t', '310'],
      ...['-vf', 'noise=alls=10:allf=t,hue=H=0.2*t', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest'],
    ]);
    engine = await testEngine();
    ({ video } = await ingestVideo(engine, { source, key: 'test-pattern', enableForensic: true }));
    const made = await runCli([
      '--data-dir',
      engine.dataDir,
      '--json',
      'watermark',
      '--key',
      'test-pattern',
      '--forensic',
      String(VIEWER),
      '--containers',
      'mp4',
    ]);
    expect(made.code, made.stderr).toBe(0);
    copy = path.join(watermarkDir(engine, video.id, made.json<{ id: string }>().id), MP4_NAME);
  }, 1_800_000);

  afterAll(async () => {
    await engine?.dispose();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('names the viewer of a 2-minute excerpt (CRF 30, half size) and names no one in the unmarked one', async () => {
    const leak = await degrade(copy, path.join(work, 'two-min.mp4'), { crf: 30, scale: 0.5, start: 90, duration: 120 });
    const r = await detectLeak(engine, { videoId: video.id }, leak);
    console.log(`test pattern, 2-minute excerpt: ${JSON.stringify(r.alignments)}`);
    expect(r.accused.map((a) => a.payload)).toEqual([VIEWER]);
    const chosen = r.alignments.find((a) => a.chosen)!;
    expect(Math.abs(chosen.offsetSeconds - 90)).toBeLessThan(0.5);

    const unmarked = await degrade(source, path.join(work, 'unmarked.mp4'), { crf: 30, scale: 0.5, start: 90, duration: 120 });
    const n = await detectLeak(engine, { videoId: video.id }, unmarked);
    console.log(`test pattern, unmarked excerpt (null trial): best z ${n.best?.z.toFixed(2)} over ${n.alignments.length} alignments`);
    expect(n.found).toBe(false);
  }, 900_000);
});
