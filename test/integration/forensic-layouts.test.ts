// The forensic layouts other than the default, each a different trade (docs/forensic.md, "Choosing a layout (`--forensic-layout`)").
// 'split' encodes each half of a segment as a GOP of its own (two encodes' work per segment, a keyframe more);
// 'single' carries one code slot per segment (files a and b). On a real 5-minute clip (320x180, 30 fps) each is
// checked for the files it promises (names, keyframes, which sign on which half), the layout it records and shows,
// and a viewer's copy after CRF 30 + 0.5x that names that viewer. The API and CLI refuse a layout they cannot honour.
// The default 'whole' layout has the same checks in forensic-pipeline.test.ts.
import { linkSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, runCli } from '../../harness/cli.js';
import { type Sandbox, sandbox } from '../../harness/cli-helpers.js';
import { ingestVideo, type TestEngine, testEngine, videoDir, watermarkDir } from '../../harness/engine.js';
import { natural, tempDir } from '../../harness/fixtures.js';
import { call, messagesOf, serveEngine, type TestServer } from '../../harness/serve-helpers.js';
import { forensicKey, patternGrid } from '../../src/core/forensic/keyed-bits.js';
import { MARK_AMPLITUDE, patternField } from '../../src/core/forensic/pattern-image.js';
import { Z_THRESHOLD } from '../../src/core/forensic/score.js';
import { SIDECAR_DIFF_HEIGHT, SIDECAR_DIFF_WIDTH, splitFrame, variantFileName } from '../../src/core/forensic/variant-plan.js';
import { FORENSIC_DIR, MP4_NAME } from '../../src/engine/data-folder/layout.js';
import { detectLeak } from '../../src/engine/forensic/detect.js';
import type { VideoRecord } from '../../src/engine/state/state-store.js';
import { readTitleLayout } from '../../src/engine/watermark/watermark-segments.js';
import { degrade, halfSlopes, slope } from '../helpers/forensic-helpers.js';
import { grayFrames, videoPackets } from '../helpers/media.js';
import { expectError } from '../helpers/serve-in-tests.js';

const SPLIT_KEY = 'layout-split';
const SINGLE_KEY = 'layout-single';
const SEGMENTS = 75;
const FRAMES = 120;
/** The mark as the grey decode sees it (gray16le expands limited-range luma by 255/219). */
const EXPECTED = (MARK_AMPLITUDE * 255) / 219;
const [W, H] = [SIDECAR_DIFF_WIDTH, SIDECAR_DIFF_HEIGHT];

let engine: TestEngine;
let server: TestServer;
let box: Sandbox;
let work: string;
let source: string;
let split: VideoRecord;
let single: VideoRecord;
let splitIngest: CliResult;
const measured: Record<string, unknown> = {};

function cli(argv: string[]): Promise<CliResult> {
  return runCli(['--data-dir', engine.dataDir, ...argv], { cwd: box.cwd, env: { WMARK_CONFIG_DIR: box.configDir } });
}

const forensicFile = (video: VideoRecord, name: string) => path.join(videoDir(engine, video.id), FORENSIC_DIR, name);
const encodesOf = (args: readonly string[]) => args.filter((a) => a === 'libx264').length;

beforeAll(async () => {
  work = tempDir('forensic-layouts');
  source = path.join(work, 'natural-5min.mp4');
  linkSync(await natural(300), source);
  engine = await testEngine();
  box = sandbox('forensic-layouts');
  // One through the CLI flag, one through the engine's request.
  splitIngest = await cli(['--json', 'ingest', source, '--key', SPLIT_KEY, '--forensic-layout', 'split']);
  split = (await engine.store.getVideoByKey(SPLIT_KEY))!;
  ({ video: single } = await ingestVideo(engine, { source, key: SINGLE_KEY, enableForensic: true, forensicLayout: 'single' }));
  server = await serveEngine(engine);
}, 900_000);

afterAll(async () => {
  await server?.close();
  await engine?.dispose();
  box?.dispose();
  if (work) rmSync(work, { recursive: true, force: true });
  console.log(`forensic layout measurements: ${JSON.stringify(measured, null, 2)}`);
});

/**
 * A viewer of `key` (through the CLI, mp4), re-encoded at CRF 30 and half size: detection names that payload and only
 * the watermark it was issued as. Returns what detection measured.
 */
async function expectViewerNamed(key: string, video: VideoRecord, payload: number): Promise<{ z?: number; segmentsRead: number }> {
  const r = await cli(['--json', 'watermark', '--key', key, '--forensic', String(payload), '--containers', 'mp4']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.json().status).toBe('READY');
  const mp4 = path.join(watermarkDir(engine, video.id, r.json().id as string), MP4_NAME);
  const leak = await degrade(mp4, path.join(work, `${key}-leak.mp4`), { crf: 30, scale: 0.5 });
  const report = await detectLeak(engine, { key }, leak);
  expect(report.found).toBe(true);
  expect(report.best).toMatchObject({ payload, rank: 1 });
  expect(report.best!.z).toBeGreaterThanOrEqual(Z_THRESHOLD);
  expect(report.accused.map((a) => a.watermarks.map((w) => w.id))).toEqual([[r.json().id]]);
  return { z: report.best?.z, segmentsRead: report.segmentsRead };
}

describe("the 'split' layout", () => {
  it('is recorded and shown: the ingest output, the API and `video show` name it', async () => {
    expect(splitIngest.code, splitIngest.stderr).toBe(0);
    expect(splitIngest.json()).toMatchObject({ key: SPLIT_KEY, status: 'INGESTED', enableForensic: true, forensicLayout: 'split' });
    expect(split).toMatchObject({ status: 'INGESTED', enableForensic: true, forensicLayout: 'split' });
    const r = await call(server.url, 'GET', `/2.0/videos/${split.id}`, { headers: server.v2 });
    expect(r.status, r.text).toBe(200);
    expect(r.json.forensicLayout).toBe('split');
    const shown = await cli(['video', 'show', SPLIT_KEY]);
    expect(shown.stdout).toMatch(/forensic\s+enabled \(split layout\)/);
  });

  it('gives every 4-s segment four files aa..bb of two GOPs each, each half carrying its own sign in full', async () => {
    const layout = await readTitleLayout(engine, split);
    expect(layout).toMatchObject({ version: 2, slots: 2 * SEGMENTS });
    const files = readdirSync(path.dirname(forensicFile(split, 'x')));
    for (let k = 0; k < SEGMENTS; k++) for (const v of ['aa', 'ab', 'ba', 'bb']) expect(files).toContain(variantFileName(v, k));
    // Nothing of the preparation is left: no one-slot files, halves or pattern frames.
    expect(files.filter((f) => /^(a|b|half)_|\.yuv$/.test(f))).toEqual([]);
    const key = forensicKey(engine.secret);
    const at = splitFrame(4, 30);
    const worst: number[] = [];
    for (const k of [7, 52]) {
      const file = (v: string) => forensicFile(split, variantFileName(v, k));
      for (const v of ['aa', 'ab', 'ba', 'bb']) {
        const packets = await videoPackets(file(v));
        expect(packets, `${v} ${k}`).toHaveLength(FRAMES);
        // A keyframe opens each half: the first packet of each half in decode order.
        expect(
          packets.flatMap((p, i) => (p.keyframe ? [i] : [])),
          `${v} ${k}: keyframes`,
        ).toEqual([0, at]);
      }
      const patterns = [0, 1].map((slot) => patternField(patternGrid(key, split.id, layout.firstSlot[k]! + slot), W, H)) as [Float32Array, Float32Array];
      const slopes = await halfSlopes({ aa: file('aa'), ab: file('ab'), ba: file('ba'), bb: file('bb') }, patterns, {
        width: W,
        height: H,
        split: at,
        frames: FRAMES,
      });
      for (const [v, both] of Object.entries(slopes)) {
        both.forEach((m, slot) => {
          const signed = m * (v[slot] === 'a' ? 1 : -1);
          worst.push(signed / EXPECTED);
          // Unlike one GOP per segment, nothing of the first half's mark is carried into the second.
          expect(signed, `segment ${k} ${v} slot ${slot + 1}: ${m.toFixed(3)}`).toBeGreaterThan(0.85 * EXPECTED);
          expect(signed, `segment ${k} ${v} slot ${slot + 1}: ${m.toFixed(3)}`).toBeLessThan(1.15 * EXPECTED);
        });
      }
    }
    measured.splitHalfMarks = { min: Math.min(...worst), max: Math.max(...worst) };
  });

  it("a viewer's copy after CRF 30 + 0.5x names that viewer", async () => {
    measured.splitLeak = await expectViewerNamed(SPLIT_KEY, split, 0x5b1c);
  });
});

describe("the 'single' layout", () => {
  it('gives every segment files a and b of one GOP each, A adding and B subtracting its one pattern, from two encodes', async () => {
    expect(single).toMatchObject({ status: 'INGESTED', forensicLayout: 'single' });
    const layout = await readTitleLayout(engine, single);
    expect(layout).toMatchObject({ version: 2, slots: SEGMENTS, slotsPerSegment: new Array(SEGMENTS).fill(1) });
    const files = readdirSync(path.dirname(forensicFile(single, 'x')));
    expect(files.filter((f) => f.endsWith('.ts')).sort()).toEqual(
      Array.from({ length: SEGMENTS }, (_, k) => [variantFileName('a', k), variantFileName('b', k)])
        .flat()
        .sort(),
    );
    // One ffmpeg per segment, with two encodes in it (A and B).
    const prep = engine.runner.calls.filter((c) => c.args.some((a) => a.includes('grainmerge')));
    expect(prep).toHaveLength(SEGMENTS);
    for (const c of prep) expect(encodesOf(c.args)).toBe(2);
    const key = forensicKey(engine.secret);
    const marks: number[] = [];
    for (const k of [7, 52]) {
      const [a, b] = await Promise.all(['a', 'b'].map((v) => grayFrames(forensicFile(single, variantFileName(v, k)), W, H)));
      for (const v of ['a', 'b']) {
        const packets = await videoPackets(forensicFile(single, variantFileName(v, k)));
        expect(packets.filter((p) => p.keyframe).length, `${v} ${k}`).toBe(1);
      }
      const half = new Float64Array(W * H);
      for (let f = 0; f < FRAMES; f++) for (let p = 0; p < W * H; p++) half[p]! += (a![f * W * H + p]! - b![f * W * H + p]!) / 256 / 2 / FRAMES;
      const m = slope(patternField(patternGrid(key, single.id, k), W, H), half);
      marks.push(m / EXPECTED);
      expect(m, `segment ${k}`).toBeGreaterThan(0.9 * EXPECTED);
      expect(m, `segment ${k}`).toBeLessThan(1.1 * EXPECTED);
    }
    measured.singleMarks = marks;
  });

  it("a viewer's copy after CRF 30 + 0.5x names that viewer", async () => {
    measured.singleLeak = await expectViewerNamed(SINGLE_KEY, single, 0x2e07);
  });
});

describe('refusals', () => {
  it('the API refuses an unknown layout, and a layout without enableForensic, naming the field', async () => {
    const bad = await call(server.url, 'POST', '/2.0/videos', {
      headers: server.v2,
      body: { sourceUrl: source, key: 'bad-layout', enableForensic: true, forensicLayout: 'diagonal' },
    });
    expectError(bad, 400, 'VALIDATION_FAILED');
    expect(messagesOf(bad)).toEqual(['forensicLayout: expected whole, split, single, got the string "diagonal"']);
    const alone = await call(server.url, 'POST', '/2.0/videos', {
      headers: server.v2,
      body: { sourceUrl: source, key: 'bad-layout', forensicLayout: 'single' },
    });
    expectError(alone, 400, 'VALIDATION_FAILED');
    expect(messagesOf(alone)).toEqual([expect.stringMatching(/^forensicLayout: applies to forensic videos only/)]);
    expect(await engine.store.getVideoByKey('bad-layout')).toBeUndefined();
  });

  it('the CLI refuses an unknown layout; a key prepared with another layout needs --replace', async () => {
    const bad = await cli(['ingest', source, '--key', 'bad-layout', '--forensic-layout', 'diagonal']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--forensic-layout: expected whole, split or single, got "diagonal"');
    expect(bad.stderr).toMatch(/hint: See `wmark ingest --help`/);
    const other = await cli(['ingest', source, '--key', SPLIT_KEY, '--forensic-layout', 'single']);
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/already prepared with the 'split' forensic layout, not 'single'/);
    expect(other.stderr).toMatch(/--replace/);
    // The same layout again (or none named) is the video already there: nothing to do.
    for (const argv of [['--forensic-layout', 'split'], ['--forensic']]) {
      const same = await cli(['--json', 'ingest', source, '--key', SPLIT_KEY, ...argv]);
      expect(same.code, same.stderr).toBe(0);
      expect(same.json()).toMatchObject({ id: split.id, forensicLayout: 'split' });
    }
  });
});
