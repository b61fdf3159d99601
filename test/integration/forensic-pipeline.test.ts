// Forensic watermarking end to end on a generated 5-minute clip with natural motion and texture (320x180, 30 fps):
// ingest with enableForensic (variants A/B + sidecar), forensic viewers served with no encode and opaque, signed
// playlists, TEXT + FORENSIC burned onto the chosen variants, detection of a viewer's copy after CRF 30 + 0.5x (whole,
// and a 3.5-minute excerpt), two copies averaged (collusion), no mark in an unmarked copy, and the refusals (4:59
// video, video ingested without forensic, malformed payloads). The clip is ingested once (beforeAll) and shared by
// every test in this file; measured z-scores and timings are printed at the end.
import { linkSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { Chalk } from 'chalk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, runCli } from '../../harness/cli.js';
import { type Sandbox, sandbox } from '../../harness/cli-helpers.js';
import { ingestVideo, type TestEngine, testEngine, videoDir, watermarkDir, workingSegment } from '../../harness/engine.js';
import { natural, tempDir } from '../../harness/fixtures.js';
import { call, messagesOf, serveEngine, type TestServer, waitFor } from '../../harness/serve-helpers.js';
import { renderDetect } from '../../src/cli/commands/detect.js';
import { codeword, forensicKey, patternGrid } from '../../src/core/forensic/keyed-bits.js';
import { MARK_AMPLITUDE, patternField } from '../../src/core/forensic/pattern-image.js';
import { raisedThreshold, Z_THRESHOLD } from '../../src/core/forensic/score.js';
import { decodeSidecar } from '../../src/core/forensic/sidecar-format.js';
import { type ForensicLayout, variantFileFor } from '../../src/core/forensic/title-layout.js';
import { SIDECAR_DIFF_HEIGHT, SIDECAR_DIFF_WIDTH, SIDECAR_HEIGHT, SIDECAR_WIDTH, splitFrame, variantFileName } from '../../src/core/forensic/variant-plan.js';
import { encodeForensicContent } from '../../src/core/forensic-payload.js';
import { FORENSIC_DIR, SIDECAR_NAME } from '../../src/engine/data-folder/layout.js';
import { detectLeak } from '../../src/engine/forensic/detect.js';
import type { VideoRecord } from '../../src/engine/state/state-store.js';
import { readTitleLayout } from '../../src/engine/watermark/watermark-segments.js';
import {
  averageCopies,
  concatSegments,
  cutCopy,
  degrade,
  fetchBytes,
  frameSize,
  halfSlopes,
  segmentUrls,
  slope,
  withoutQueries,
} from '../helpers/forensic-helpers.js';
import { decodeFrame, videoPackets } from '../helpers/media.js';
import { expectError } from '../helpers/serve-in-tests.js';

const KEY = 'forensic-natural-5min';
const PLAIN_KEY = 'plain-natural-4s';
const SEGMENTS = 75;
/** Two code slots per 4-s segment (sidecar v2). */
const SLOTS = 150;
let layout: ForensicLayout;
/** Viewer payloads: P1 via 2.0 (base64), P2 via 1.0 ("Zq"), P3 with a TEXT setting, P4 through the CLI. */
const P1 = 0x4142;
const P2 = 0x5a71;
const P3 = 0x7e01;
const P4 = 0x3132;

let engine: TestEngine;
let server: TestServer;
let box: Sandbox;
let work: string;
let video: VideoRecord;
let plain: VideoRecord;
let source: string;
let short: string;
let ingestSeconds = 0;
const measured: Record<string, unknown> = {};

/** The test's engine counts every ffmpeg call: libx264 invocations are encodes. */
const encodes = () => engine.runner.encodes();

function cli(argv: string[]): Promise<CliResult> {
  return runCli(['--data-dir', engine.dataDir, ...argv], { cwd: box.cwd, env: { WMARK_CONFIG_DIR: box.configDir } });
}

function codeOf(payload: number): Int8Array {
  return codeword(forensicKey(engine.secret), video.id, payload, SLOTS);
}

function variantFile(payload: number, k: number): string {
  return path.join(videoDir(engine, video.id), FORENSIC_DIR, variantFileFor(layout, codeOf(payload), k));
}

beforeAll(async () => {
  work = tempDir('forensic');
  // A private hard link: the shared fixture cache may be cleaned by another run while this file still needs the clip.
  source = path.join(work, 'natural-5min.mp4');
  linkSync(await natural(300), source);
  short = await cutCopy(source, path.join(work, 'natural-4m59s.mp4'), 299);
  engine = await testEngine();
  box = sandbox('forensic');
  const started = Date.now();
  ({ video } = await ingestVideo(engine, { source, key: KEY, enableForensic: true }));
  ingestSeconds = (Date.now() - started) / 1000;
  layout = await readTitleLayout(engine, video);
  ({ video: plain } = await ingestVideo(engine, { source: await natural(4), key: PLAIN_KEY }));
  // Rendered in full: the TEXT + FORENSIC viewer below is read segment by segment from disk (on-demand rendering,
  // the server's default for TEXT, is not what this file tests).
  server = await serveEngine(engine, { render: 'full' });
}, 600_000);

afterAll(async () => {
  await server?.close();
  await engine?.dispose();
  box?.dispose();
  if (work) rmSync(work, { recursive: true, force: true });
  // Measurements for the record (z-scores, timings), visible in the test output.
  console.log(`forensic pipeline measurements: ${JSON.stringify({ ingestSeconds, ...measured }, null, 2)}`);
});

describe('ingest with enableForensic', () => {
  it("keeps variants A and B of every segment and a small sidecar whose (A-B)/2 is +a x the segment's pattern", () => {
    expect(video).toMatchObject({ status: 'INGESTED', enableForensic: true, width: 320, height: 180 });
    expect(video.segments).toHaveLength(SEGMENTS);
    const dir = path.join(videoDir(engine, video.id), FORENSIC_DIR);
    const files = readdirSync(dir).sort();
    for (let k = 0; k < SEGMENTS; k++) {
      for (const v of ['aa', 'ab', 'ba', 'bb']) expect(files).toContain(variantFileName(v, k));
    }
    expect(files.filter((f) => f.endsWith('.yuv') || f.startsWith('half_'))).toEqual([]);
    expect(layout).toMatchObject({ version: 2, slots: SLOTS });
    const bytes = readFileSync(path.join(dir, SIDECAR_NAME));
    measured.sidecarBytes = bytes.length;
    expect(bytes.length).toBeLessThan(5 * 1024 * 1024);
    const sidecar = decodeSidecar(bytes);
    expect({
      w: sidecar.width,
      h: sidecar.height,
      segments: sidecar.segmentStarts.length,
      slots: sidecar.slotStarts.length,
      frames: sidecar.signatureTimes.length,
      version: sidecar.version,
    }).toEqual({
      w: SIDECAR_WIDTH,
      h: SIDECAR_HEIGHT,
      segments: SEGMENTS,
      slots: SLOTS,
      frames: 9000,
      version: 2,
    });
    expect(sidecar.slotStarts.slice(0, 3)).toEqual([0, 2, 4]);
    expect(sidecar.segmentStarts[74]).toBeCloseTo(296, 6);
    // What ingest measured from the encoded variants is the keyed pattern with the planned sign and about its amplitude.
    const key = forensicKey(engine.secret);
    const n = SIDECAR_DIFF_WIDTH * SIDECAR_DIFF_HEIGHT;
    const slopes = Array.from({ length: SLOTS }, (_, k) =>
      slope(patternField(patternGrid(key, video.id, k), SIDECAR_DIFF_WIDTH, SIDECAR_DIFF_HEIGHT), sidecar.diff.subarray(k * n, (k + 1) * n)),
    );
    measured.markSlope = { min: Math.min(...slopes), max: Math.max(...slopes) };
    // The sidecar is in full-range grey (ffmpeg's gray16le expands limited-range luma by 255/219), as leaks are decoded.
    const expected = (MARK_AMPLITUDE * 255) / 219;
    // A segment is one GOP: the first half keeps nearly all of the mark; in the second, P-frames that skip static
    // blocks carry some of the first half's mark on, so it keeps a little less (0.80-0.94 alone, 0.88 on average; one
    // slot at 0.74 under a busy full suite). The sidecar holds what was encoded, which is what detection reads against.
    for (const [k, s] of slopes.entries()) expect(s, `slot ${k}`).toBeGreaterThan((k % 2 ? 0.7 : 0.9) * expected);
    for (const s of slopes) expect(s).toBeLessThan(1.05 * expected);
    const secondHalves = slopes.filter((_, k) => k % 2 === 1);
    expect(secondHalves.reduce((a, b) => a + b, 0) / secondHalves.length).toBeGreaterThan(0.83 * expected);
    // One normalising encode, one A+B encode per segment.
    expect(engine.runner.calls.filter((c) => c.args.some((a) => a.includes('grainmerge'))).length).toBe(SEGMENTS);
  });
  it("a two-slot segment's four variants are each one GOP (one keyframe), and each carries its two signs on its halves", async () => {
    const dir = path.join(videoDir(engine, video.id), FORENSIC_DIR);
    const key = forensicKey(engine.secret);
    const [w, h] = [SIDECAR_DIFF_WIDTH, SIDECAR_DIFF_HEIGHT];
    const expected = (MARK_AMPLITUDE * 255) / 219;
    for (const k of [7, 52]) {
      const file = (v: string) => path.join(dir, variantFileName(v, k));
      for (const v of ['aa', 'ab', 'ba', 'bb']) {
        const packets = await videoPackets(file(v));
        expect(packets, `${v} ${k}`).toHaveLength(120);
        expect(packets.filter((p) => p.keyframe).length, `${v} ${k}: keyframes`).toBe(1);
      }
      const patterns = [0, 1].map((slot) => patternField(patternGrid(key, video.id, layout.firstSlot[k]! + slot), w, h)) as [Float32Array, Float32Array];
      const slopes = await halfSlopes({ aa: file('aa'), ab: file('ab'), ba: file('ba'), bb: file('bb') }, patterns, {
        width: w,
        height: h,
        split: splitFrame(4, 30),
        frames: 120,
      });
      for (const [v, both] of Object.entries(slopes)) {
        both.forEach((measured, slot) => {
          const sign = v[slot] === 'a' ? 1 : -1;
          expect(measured * sign, `segment ${k} ${v} slot ${slot + 1}: ${measured.toFixed(3)}`).toBeGreaterThan(0.6 * expected);
          expect(measured * sign, `segment ${k} ${v} slot ${slot + 1}: ${measured.toFixed(3)}`).toBeLessThan(1.4 * expected);
        });
      }
    }
  });
});

describe('refusals', () => {
  it('a 4:59 video is refused at ingest with forensic: engine, API (422 in 1.0 and 2.0) and CLI (exit 2)', async () => {
    await expect(ingestVideo(engine, { source: short, key: 'short-engine', enableForensic: true })).rejects.toMatchObject({
      code: 'FORENSIC_TOO_SHORT',
      message: expect.stringMatching(/at least 5 minutes.*lasts 4:59/),
    });
    for (const [v, headers] of [
      ['2.0', server.v2],
      ['1.0', server.v1],
    ] as const) {
      const r = await call(server.url, 'POST', `/${v}/videos`, { headers, body: { sourceUrl: short, key: `short-${v}`, enableForensic: true } });
      expectError(r, 422, 'FORENSIC_TOO_SHORT');
      expect(messagesOf(r).join(' ')).toMatch(/at least 5 minutes/);
    }
    const c = await cli(['ingest', short, '--forensic', '--key', 'short-cli']);
    expect(c.code, c.stderr).toBe(2);
    expect(c.stderr).toMatch(/at least 5 minutes/);
    expect(c.stderr).toMatch(/^hint: Ingest it without --forensic \(visible marks work on any length\)/m);
    // Nothing registered for any of them.
    for (const key of ['short-engine', 'short-2.0', 'short-1.0', 'short-cli']) expect(await engine.store.getVideoByKey(key)).toBeUndefined();
  });

  it('a FORENSIC request on a video ingested without it is refused: 422 in 1.0 and 2.0, exit 2 in the CLI', async () => {
    const r2 = await call(server.url, 'POST', '/2.0/watermark', {
      headers: server.v2,
      body: { key: PLAIN_KEY, settings: [{ type: 'FORENSIC', content: 'QUI=' }] },
    });
    expectError(r2, 422, 'FORENSIC_NOT_ENABLED');
    expect(messagesOf(r2).join(' ')).toMatch(/enableForensic/);
    const r1 = await call(server.url, 'POST', '/1.0/watermark', {
      headers: server.v1,
      body: { key: PLAIN_KEY, settings: [{ content: 'visible' }, { type: 'FORENSIC', content: 'AB' }] },
    });
    expectError(r1, 422, 'FORENSIC_NOT_ENABLED');
    const c = await cli(['watermark', '--key', PLAIN_KEY, '--forensic', 'AB', '--containers', 'm3u8']);
    expect(c.code, c.stderr).toBe(2);
    expect(c.stderr).toMatch(/not ingested with forensic/);
    expect(await engine.store.listWatermarks(plain.id)).toEqual([]);
    const d = await cli(['detect', source, '--key', PLAIN_KEY]);
    expect(d.code, d.stderr).toBe(2);
    expect(d.stderr).toMatch(/not ingested with forensic/);
  });

  it('malformed FORENSIC content is a 400 naming the expected form', async () => {
    const cases = [
      ['1.0', 'ABC', /expected exactly 2 ASCII characters/],
      ['1.0', 'A', /expected exactly 2 ASCII characters/],
      ['1.0', 'QUI=', /expected exactly 2 ASCII characters/],
      ['1.0', 'é1', /expected exactly 2 ASCII characters/],
      ['2.0', 'AB', /expected base64 of exactly 2 bytes/],
      ['2.0', 'QUJD', /expected base64 of exactly 2 bytes/],
      ['2.0', 'QQ==', /expected base64 of exactly 2 bytes/],
      ['2.0', 'QUJ=', /expected base64 of exactly 2 bytes/],
    ] as const;
    for (const [v, content, expected] of cases) {
      const r = await call(server.url, 'POST', `/${v}/watermark`, {
        headers: v === '1.0' ? server.v1 : server.v2,
        body: { key: KEY, settings: [{ type: 'FORENSIC', content }] },
      });
      expectError(r, 400, 'VALIDATION_FAILED');
      expect(messagesOf(r), `${v} ${content}`).toEqual([expect.stringMatching(expected)]);
      expect(messagesOf(r)[0]).toMatch(/^settings\[0\]\.content: /);
    }
    expect(await engine.store.listWatermarks(video.id)).toEqual([]);
  });
});

describe('forensic viewers', () => {
  /** Signed playlist URLs and watermark ids of viewers 1 (2.0) and 2 (1.0). */
  const viewers: { id: string; m3u8: string; playlist: string }[] = [];
  let leakSegments: Buffer[] = [];
  let viewer2Segments: Buffer[] = [];
  let viewer1Copy = '';

  it('a forensic-only request answers READY at once, from the A/B segments, with zero encodes (1.0 and 2.0)', async () => {
    const before = encodes();
    const t0 = Date.now();
    const r2 = await call(server.url, 'POST', '/2.0/watermark', {
      headers: server.v2,
      body: { key: KEY, settings: [{ type: 'FORENSIC', content: encodeForensicContent(P1, '2.0') }] },
    });
    const ms2 = Date.now() - t0;
    const t1 = Date.now();
    const r1 = await call(server.url, 'POST', '/1.0/watermark', {
      headers: server.v1,
      body: { key: KEY, settings: [{ type: 'FORENSIC', content: 'Zq' }], containers: ['m3u8'] },
    });
    const ms1 = Date.now() - t1;
    measured.forensicResponseMs = { '2.0': ms2, '1.0': ms1 };
    for (const r of [r2, r1]) {
      expect(r.status, r.text).toBe(201);
      expect(r.json.status).toBe('READY');
      expect(r.json.containers.m3u8).toMatch(/video\.m3u8\?/);
    }
    expect(ms2).toBeLessThan(10_000);
    expect(ms1).toBeLessThan(10_000);
    // The record keeps the payload, so detection can name the watermark.
    expect((await engine.store.getWatermark(r2.json.id))?.forensicPayload).toBe(P1);
    expect((await engine.store.getWatermark(r1.json.id))?.forensicPayload).toBe(P2);
    // mp4 (2.0 default containers) is joined by stream copy: still no encode.
    // Each viewer's join runs on its own, so either may end first.
    for (const [r, who] of [
      [r2, 'viewer 1'],
      [r1, 'viewer 2'],
    ] as const)
      await waitFor(async () => ((await engine.store.getWatermark(r.json.id))?.status === 'READY' ? true : undefined), `${who} to be READY`, 30_000);
    expect(encodes() - before).toBe(0);
    // A new forensic viewer costs a playlist of under 3 KB and no encode.
    for (const r of [r2, r1]) expect(statSync(path.join(watermarkDir(engine, video.id, r.json.id), 'video.m3u8')).size).toBeLessThanOrEqual(3 * 1024);
    // Each segment is the variant file itself (a hard link), not a copy made by ffmpeg.
    for (const [r, p] of [
      [r2, P1],
      [r1, P2],
    ] as const) {
      for (const k of [0, 1, 37, 74]) {
        const served = statSync(path.join(watermarkDir(engine, video.id, r.json.id), `seg_${String(k).padStart(5, '0')}.ts`));
        expect(served.ino).toBe(statSync(variantFile(p, k)).ino);
      }
    }
    for (const r of [r2, r1]) {
      const pl = await call(server.url, 'GET', r.json.containers.m3u8);
      expect(pl.status).toBe(200);
      viewers.push({ id: r.json.id, m3u8: r.json.containers.m3u8, playlist: pl.text });
    }
    // Asking again is the same watermark (no new work).
    const again = await call(server.url, 'POST', '/2.0/watermark', {
      headers: server.v2,
      body: { key: KEY, settings: [{ type: 'FORENSIC', content: encodeForensicContent(P1, '2.0') }] },
    });
    expect({ status: again.status, id: again.json.id }).toEqual({ status: 200, id: r2.json.id });
    expect(encodes() - before).toBe(0);
  });

  it('the CLI spells the payload three ways for one watermark, READY with no encode', async () => {
    const a = await cli(['--json', 'watermark', '--key', KEY, '--forensic', 'ascii:12', '--containers', 'm3u8']);
    expect(a.code, a.stderr).toBe(0);
    const id = a.json().id as string;
    expect(a.json().status).toBe('READY');
    expect((await engine.store.getWatermark(id))?.forensicPayload).toBe(P4);
    for (const spelling of [String(P4), encodeForensicContent(P4, '2.0')!]) {
      const b = await cli(['--json', 'watermark', '--key', KEY, '--forensic', spelling, '--containers', 'm3u8']);
      expect(b.code, b.stderr).toBe(0);
      expect(b.json()).toMatchObject({ id, created: false });
    }
    const seg = statSync(path.join(watermarkDir(engine, video.id, id), 'seg_00010.ts'));
    expect(seg.ino).toBe(statSync(variantFile(P4, 10)).ino);
    const bad = await cli(['watermark', '--key', KEY, '--forensic', '70000']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/does not fit in 16 bits/);
  });

  it('opaque delivery: two viewers get the same playlist apart from signatures, bound to their own watermark', async () => {
    const [v1, v2] = viewers as [(typeof viewers)[0], (typeof viewers)[0]];
    expect(v1.id).not.toBe(v2.id);
    // The two codewords differ in about half the segments, yet nothing in the playlist shows it.
    const diffSegs = Array.from(codeOf(P1)).filter((c, k) => c !== codeOf(P2)[k]!).length;
    expect(diffSegs).toBeGreaterThan(15);
    const v1Segments = segmentUrls(v1.m3u8, v1.playlist);
    expect(v1Segments).toHaveLength(SEGMENTS);
    expect(withoutQueries(v1.playlist)).toBe(withoutQueries(v2.playlist));
    expect(v1.playlist).not.toMatch(/\b[ab]_\d{5}|forensic|variant/i);
    for (const u of v1Segments) expect(new URL(u).pathname).toMatch(new RegExp(`/${v1.id}/seg_\\d{5}\\.ts$`));
    // Viewer 1's signature opens neither viewer 2's playlist nor viewer 2's segments.
    const swap = (url: string) => url.replace(`/${v1.id}/`, `/${v2.id}/`);
    expectError(await call(server.url, 'GET', swap(v1.m3u8)), 403, 'SIGNATURE_INVALID');
    expectError(await call(server.url, 'GET', swap(v1Segments[5]!)), 403, 'SIGNATURE_INVALID');
    // The variant files are not reachable through a viewer's signed folder, nor is the sidecar.
    for (const name of [variantFileName('a', 0), variantFileName('b', 0), `${FORENSIC_DIR}/${SIDECAR_NAME}`]) {
      const url = v1Segments[0]!.replace('seg_00000.ts', name);
      const r = await call(server.url, 'GET', url);
      expect(r.status, url).toBe(404);
    }
    // The served bytes of segment k are the variant the codeword names (and not the other one).
    leakSegments = [];
    for (let k = 0; k < SEGMENTS; k++) {
      const bytes = await fetchBytes(v1Segments[k]!);
      expect(bytes.equals(readFileSync(variantFile(P1, k))), `viewer 1 segment ${k}`).toBe(true);
      const other = path.join(
        videoDir(engine, video.id),
        FORENSIC_DIR,
        variantFileFor(
          layout,
          codeOf(P1).map((v) => -v),
          k,
        ),
      );
      expect(bytes.equals(readFileSync(other)), `viewer 1 segment ${k} is not the other variant`).toBe(false);
      leakSegments.push(bytes);
    }
    const v2Segments = segmentUrls(v2.m3u8, v2.playlist);
    viewer2Segments = [];
    for (let k = 0; k < SEGMENTS; k++) {
      const bytes = await fetchBytes(v2Segments[k]!);
      expect(bytes.equals(readFileSync(variantFile(P2, k))), `viewer 2 segment ${k}`).toBe(true);
      const agree = codeOf(P1)[2 * k] === codeOf(P2)[2 * k] && codeOf(P1)[2 * k + 1] === codeOf(P2)[2 * k + 1];
      expect(bytes.equals(leakSegments[k]!), `segment ${k}: same bytes exactly when the codewords agree on both its slots`).toBe(agree);
      viewer2Segments.push(bytes);
    }
  });

  it("viewer 1's copy, re-encoded at CRF 30 and downscaled 0.5x, names viewer 1 and the watermark exactly (CLI detect, exit 0)", async () => {
    expect(leakSegments).toHaveLength(SEGMENTS);
    viewer1Copy = await concatSegments(leakSegments, path.join(work, 'viewer1.ts'));
    const leak = await degrade(viewer1Copy, path.join(work, 'leak-crf30-half.mp4'), { crf: 30, scale: 0.5 });
    expect(await frameSize(leak)).toEqual({ width: 160, height: 90 });
    const before = encodes();
    const r = await cli(['--json', 'detect', leak, '--key', KEY]);
    expect(r.code, r.stderr).toBe(0);
    const out = r.json();
    measured.leakCrf30Half = { z: out.best?.z, gap: out.best?.gap, segmentsRead: out.segmentsRead, alignment: out.alignment, elapsedMs: out.elapsedMs };
    expect(out.found).toBe(true);
    expect(out.best).toMatchObject({ payload: P1, rank: 1 });
    expect(out.best.z).toBeGreaterThanOrEqual(Z_THRESHOLD);
    expect(out.segmentsRead).toBeGreaterThanOrEqual(140);
    // Mapped onto the original's own time: mid-leak within 0.2 s, at speed 1 within 0.2 % (the alignment may still
    // split a contiguous leak into a few pieces with the same mapping; measured: 1 to 5 pieces on this clip).
    const mid = out.pieces.find((p: { leakStart: number; leakEnd: number }) => p.leakStart <= 150 && p.leakEnd > 150);
    expect(Math.abs(mid.scale - 1)).toBeLessThan(0.002);
    expect(Math.abs(mid.scale * 150 + mid.offset - 150)).toBeLessThanOrEqual(0.2);
    // The verdict comes with the chance that it is wrong.
    expect(out.falseAccusation.bound).toBeLessThan(1e-6);
    expect(out.collusion.suspected).toBe(false);
    expect(out.accused).toEqual([
      { payload: P1, ascii: 'AB', base64: 'QUI=', z: out.best.z, watermarks: [{ id: viewers[0]!.id, createdOn: expect.any(Number) }] },
    ]);
    // The runner-up is nowhere near.
    expect(out.best.gap).toBeGreaterThan(2);
    expect(encodes() - before).toBe(0);
  });

  it('a 3.5-minute excerpt starting off a segment boundary (61.3 s), CRF 30 + 0.5x, still names viewer 1', async () => {
    const leak = await degrade(viewer1Copy, path.join(work, 'leak-excerpt.mp4'), { crf: 30, scale: 0.5, start: 61.3, duration: 210 });
    const r = await detectLeak(engine, { key: KEY }, leak);
    measured.excerpt210s = { z: r.best?.z, gap: r.best?.gap, segmentsRead: r.segmentsRead, alignment: r.alignment };
    expect(Math.abs(r.pieces[0]!.scale * 100 + r.pieces[0]!.offset - 161.3)).toBeLessThanOrEqual(0.15);
    expect(r.segmentsRead).toBeGreaterThanOrEqual(100);
    expect(r.segmentsRead).toBeLessThanOrEqual(106);
    expect(r.found).toBe(true);
    expect(r.accused.map((a) => a.payload)).toEqual([P1]);
  });

  it("two viewers' copies averaged (collusion), CRF 30 + 0.5x: both are named and collusion is flagged", async () => {
    const viewer2Copy = await concatSegments(viewer2Segments, path.join(work, 'viewer2.ts'));
    const leak = await averageCopies(viewer1Copy, viewer2Copy, path.join(work, 'leak-averaged.mp4'), { crf: 30, scale: 0.5 });
    const r = await detectLeak(engine, { key: KEY }, leak);
    measured.averaged = { collusion: r.collusion, accused: r.accused.map((a) => ({ payload: a.payload, z: a.z })) };
    expect(r.found).toBe(true);
    expect(r.collusion.suspected).toBe(true);
    expect([...r.collusion.payloads].sort()).toEqual([P1, P2].sort());
    expect(r.accused.map((a) => a.payload).sort()).toEqual([P1, P2].sort());
    expect(r.accused.flatMap((a) => a.watermarks.map((w) => w.id)).sort()).toEqual(viewers.map((v) => v.id).sort());
  });

  it('an unmarked copy (the source, same degradation) yields "no forensic mark found", exit 8', async () => {
    const leak = await degrade(source, path.join(work, 'unmarked-crf30-half.mp4'), { crf: 30, scale: 0.5 });
    const r = await cli(['--json', 'detect', leak, '--key', KEY]);
    expect(r.code, r.stderr + r.stdout).toBe(8);
    const out = r.json();
    measured.unmarked = { bestZ: out.best?.z, segmentsRead: out.segmentsRead, pieces: out.pieces?.length, alignment: out.alignment };
    expect(out).toMatchObject({ found: false, accused: [], collusion: { suspected: false } });
    // The source's film grain is not in the ingested encode the sidecar was made from, and this clip's slow pan gives
    // alignment little else: the source aligns in pieces, or (about 1 run in 4) not at all. The clean-title null
    // below is the one that reads the whole timeline.
    expect(out.best?.z ?? 0).toBeLessThan(Z_THRESHOLD);
    // What a person running `wmark detect` without --json reads for this result.
    const text = renderDetect(out, new Chalk({ level: 0 }));
    // The bar is 6.5 when the leak aligns one way, a little higher when several alignments were read.
    expect(text).toMatch(/^no forensic mark found: the best payload scored z = \d+\.\d\d, below the 6\.\d+ needed to accuse anyone\.$/m);
    expect(out.threshold).toBeCloseTo(raisedThreshold(Z_THRESHOLD, out.alignments.length), 6);
    expect(text).not.toMatch(/payload {4}\d/);
  });

  it('a 20-s leak is "too short", saying the 2 minutes the title needs (exit 8)', async () => {
    const viewer = await cli(['--json', 'watermark', '--key', KEY, '--forensic', '9001', '--containers', 'mp4']);
    expect(viewer.code, viewer.stderr).toBe(0);
    const leak = await cutCopy(viewer.json().files.mp4, path.join(work, 'leak-20s.mp4'), 20);
    const json = await cli(['--json', 'detect', leak, '--key', KEY]);
    expect(json.code, json.stderr).toBe(8);
    expect(json.json()).toMatchObject({ found: false, tooShort: true, shortestLeakSeconds: 120 });
    const text = await cli(['detect', leak, '--key', KEY]);
    expect(text.code).toBe(8);
    expect(text.stdout).toMatch(
      /^too short: the leak lasts 20\.\d s, and this title's mark names a viewer from 2 minutes of it; a copy this short cannot name anyone\.$/m,
    );
  });

  it('the title as ingested, before any mark (its clean segments, same degradation), reads every segment and names nobody', async () => {
    const clean = await concatSegments(
      Array.from({ length: SEGMENTS }, (_, k) => readFileSync(workingSegment(engine, video.id, k))),
      path.join(work, 'clean-title.ts'),
    );
    const leak = await degrade(clean, path.join(work, 'clean-crf30-half.mp4'), { crf: 30, scale: 0.5 });
    const r = await detectLeak(engine, { key: KEY }, leak);
    measured.cleanTitle = { bestZ: r.best?.z, segmentsRead: r.segmentsRead, pieces: r.pieces.length, alignment: r.alignment };
    expect(r).toMatchObject({ found: false, accused: [], collusion: { suspected: false } });
    // Nearly all of it is read, so this is a strong null. The clean title aligns less well than a viewer's copy (score
    // about 0.40 against 0.57: the sidecar's pictures are CRF 23 variants, this is the CRF 15 working copy), and on
    // this cloud-texture pan a few windows can vote for a place elsewhere. A stretch between two mappings that
    // disagree is left unread rather than read at a guessed place: 150 of 150 alone, 127 to 138 under the full suite
    // on a busy machine. Four in five read still makes the null strong.
    expect(r.segmentsRead).toBeGreaterThanOrEqual(120);
    expect(r.best!.z).toBeLessThan(Z_THRESHOLD);
  });

  it('TEXT settings in the same request are burned in (encodes) onto the variants the payload chooses', async () => {
    const before = encodes();
    const preemptedBefore = engine.renderer.stats().preempted;
    const r = await call(server.url, 'POST', '/2.0/watermark', {
      headers: server.v2,
      body: {
        key: KEY,
        settings: [
          { content: 'viewer three', fontSize: 0.12, fontOpacity: 0.9, y: 0.15 },
          { type: 'FORENSIC', content: encodeForensicContent(P3, '2.0') },
        ],
        containers: ['m3u8'],
      },
    });
    expect(r.status, r.text).toBe(201);
    expect((await engine.store.getWatermark(r.json.id))?.forensicPayload).toBe(P3);
    await waitFor(
      async () => ((await engine.store.getWatermark(r.json.id))?.status === 'READY' ? true : undefined),
      'the TEXT + FORENSIC watermark to be READY',
      180_000,
      250,
    );
    // One encode per segment, and again for a render stopped to make room for the urgent first segment (one stopped
    // before its ffmpeg started has no encode to repeat).
    const restarted = engine.renderer.stats().preempted - preemptedBefore;
    expect(encodes() - before).toBeGreaterThanOrEqual(SEGMENTS);
    expect(encodes() - before).toBeLessThanOrEqual(SEGMENTS + restarted);
    const dir = watermarkDir(engine, video.id, r.json.id);
    const seg = path.join(dir, 'seg_00003.ts');
    expect(statSync(seg).ino).not.toBe(statSync(variantFile(P3, 3)).ino);
    // The text is drawn: the top band differs clearly from the variant it was drawn on; the bottom is the same picture.
    const size = { width: 320, height: 180 };
    const [drawn, base] = await Promise.all([decodeFrame(seg, 0.5, size), decodeFrame(variantFile(P3, 3), 0.5, size)]);
    // Pixels changed far beyond re-encoding noise (grainy texture at CRF 23 moves a few levels): glyph pixels.
    const changed = (y0: number, y1: number) => {
      let count = 0;
      for (let y = y0; y < y1; y++) {
        for (let x = 0; x < 320; x++) {
          const a = drawn.at(x, y),
            b = base.at(x, y);
          if (Math.abs(a[0] - b[0]) + Math.abs(a[1] - b[1]) + Math.abs(a[2] - b[2]) > 150) count++;
        }
      }
      return count;
    };
    measured.textPixels = { top: changed(5, 50), bottom: changed(125, 170) };
    expect(changed(5, 50)).toBeGreaterThan(300);
    expect(changed(125, 170)).toBeLessThan(20);
    // And the invisible mark under the text still names the viewer.
    const copy = await concatSegments(
      Array.from({ length: SEGMENTS }, (_, k) => readFileSync(path.join(dir, `seg_${String(k).padStart(5, '0')}.ts`))),
      path.join(work, 'viewer3.ts'),
    );
    const result = await detectLeak(engine, { key: KEY }, copy);
    measured.textPlusForensic = { z: result.best?.z, gap: result.best?.gap, segmentsRead: result.segmentsRead };
    expect(result.found).toBe(true);
    expect(result.accused.map((a) => a.payload)).toEqual([P3]);
    expect(result.accused[0]!.watermarks.map((w) => w.id)).toEqual([r.json.id]);
  });

  it('detect refuses a missing leak file and an unknown video', async () => {
    const missing = await cli(['detect', path.join(work, 'nope.mp4'), '--key', KEY]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no such file/);
    const unknown = await cli(['detect', source, '--key', 'no-such-video']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.code).not.toBe(8);
    expect(unknown.stderr).toMatch(/no video with key "no-such-video"/);
  });
});
