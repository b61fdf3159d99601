// `wmark watermark --template viewer-corner --batch FILE --out DIR`: one watermark per row, NDJSON results, and each output carries its own row's text.
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli.js';
import { testEngine, workingSegment } from '../../harness/engine.js';
import { fixture, tempDir } from '../../harness/fixtures.js';
import { segmentFileName, segmentFrameCounts } from '../../src/core/plan/segment-timing.js';
import type { VideoRecord } from '../../src/engine/state/state-store.js';
import { decodeFrame, decodesCleanly, diffBox, type RgbFrame } from '../helpers/media.js';
import {
  compareRegion,
  type FrameDiff,
  ffmpegWrapper,
  grow,
  loggedEncodes,
  meanRgb,
  parsePlaylist,
  referenceFrame,
  segmentAt,
  unionBox,
} from '../helpers/watermark-helpers.js';

// viewer-corner draws at 0.035 of the frame height: 6 px on 180p is too small to tell names apart, 13 px on 360p is not.
const SIZE = { width: 640, height: 360 };
const KEY = 'batch-clip';
const ROWS = [
  { name: 'Alice Example', email: 'alice@example.com' },
  { name: 'Bob', email: 'bob@test.org' },
  { name: "O'Brien, Pat", email: 'pat+1@x.io' },
];

let dir: string;
let dataDir: string;
let log: string;
let env: Record<string, string>;

beforeAll(async () => {
  dir = tempDir('batch');
  // Under a folder whose name starts with ".work" (like ~/.workspace): --out once skipped every file on such paths.
  dataDir = path.join(dir, '.workspace', 'data');
  log = path.join(dir, 'ffmpeg.log');
  // Every ffmpeg process the CLI starts is logged, so encodes can be counted across the in-process CLI.
  env = { WMARK_CONFIG_DIR: path.join(dir, 'config'), WMARK_FFMPEG: ffmpegWrapper(dir, { log }) };
  const source = await fixture({ kind: 'flat', color: '336699', ...SIZE, seconds: 10, fps: 30 });
  const ingest = await runCli(['--json', '--data-dir', dataDir, 'ingest', source, '--key', KEY], { env, cwd: dir });
  expect(ingest.code, ingest.stderr).toBe(0);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The ingested clip's record, read from the CLI's data dir. */
async function clip(): Promise<VideoRecord> {
  const e = await testEngine({ dataDir });
  try {
    return (await e.store.getVideoByKey(KEY))!;
  } finally {
    await e.dispose();
  }
}

/** The working segment (clean picture) holding the frame at `seconds`, and that moment's time within it. */
async function workingSegmentAt(seconds: number): Promise<{ file: string; offset: number }> {
  const e = await testEngine({ dataDir });
  try {
    const video = (await e.store.getVideoByKey(KEY))!;
    const at = segmentAt(video, seconds);
    return { file: workingSegment(e, video.id, at.index), offset: at.offset };
  } finally {
    await e.dispose();
  }
}

/**
 * Plain ffmpeg drawing the row's text the way viewer-corner describes it (the settings' units, computed here):
 * "[%name%] <[%email%]>" at (0.97, 0.95), RIGHT/BOTTOM, 0.035*H px, white at 0.5, black shadow at 0.4 offset 0.06 em.
 */
async function rowReference(row: { name: string; email: string }): Promise<RgbFrame> {
  const fontPx = Math.round(0.035 * SIZE.height);
  const shadow = Math.round(0.06 * fontPx);
  const { file, offset } = await workingSegmentAt(1);
  return referenceFrame(
    file,
    offset,
    {
      text: `${row.name} <${row.email}>`,
      fontPx,
      color: '0xFFFFFF@0.5',
      x: 'w*0.97-tw',
      y: 'h*0.95-th',
      shadow: { color: '0x000000@0.4', x: shadow, y: shadow },
    },
    SIZE,
  );
}

function difference(a: RgbFrame, b: RgbFrame): FrameDiff {
  const bg = meanRgb(a, { x0: 0, y0: 0, x1: 5, y1: 5 });
  return compareRegion(a, b, grow(unionBox(diffBox(a, bg, 40), diffBox(b, bg, 40)), 4, SIZE));
}

const csv = (header: string, rows: string[]) => `${[header, ...rows].join('\n')}\n`;
const csvField = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

describe('a CSV batch of 3 viewers', () => {
  let lines: Array<{ line: number; id: string; status: string; mappings: Record<string, string>; out: string; error?: unknown }>;
  let outDir: string;
  /** The encoder outputs of the batch's ffmpeg runs (a shared-decode run encodes one output per viewer). */
  let encodes: string[];

  beforeAll(async () => {
    const file = path.join(dir, 'viewers.csv');
    writeFileSync(
      file,
      csv(
        'name,email',
        ROWS.map((r) => `${csvField(r.name)},${csvField(r.email)}`),
      ),
    );
    outDir = path.join(dir, 'out');
    const before = loggedEncodes(log).length;
    const res = await runCli(['--json', '--data-dir', dataDir, 'watermark', '--key', KEY, '--template', 'viewer-corner', '--batch', file, '--out', outDir], {
      env,
      cwd: dir,
    });
    expect(res.code, res.stdout + res.stderr).toBe(0);
    // A line is printed as its row finishes, and rows in flight together (8 locally) may finish in any order: by row.
    lines = res.lines<(typeof lines)[number]>().sort((x, y) => x.line - y.line);
    encodes = loggedEncodes(log)
      .slice(before)
      .flatMap((l) => l.split(' ').filter((arg) => arg.endsWith('.ts.part')));
  });

  it('prints one NDJSON line per row, each READY with its own id', async () => {
    expect(lines).toHaveLength(3);
    expect(lines.map((l) => l.line)).toEqual([2, 3, 4]);
    expect(lines.map((l) => l.mappings)).toEqual(ROWS);
    for (const l of lines) {
      expect(l.error).toBeUndefined();
      expect(l.status).toBe('READY');
    }
    expect(new Set(lines.map((l) => l.id)).size).toBe(3);
    // 10 s in segments of 0.5, 0.5, 1, 2, 4 and 2 s: 6 segment encodes per viewer, each segment once for each viewer (renders
    // of one segment may share a decode, with an encode per viewer), nothing else encoded (the mp4s are stream copies).
    const segments = segmentFrameCounts({ num: 30, den: 1 }, 10 * 30, true);
    expect((await clip()).segments).toEqual(segments.map((n) => n / 30));
    expect(encodes).toHaveLength(3 * segments.length);
    for (const [k] of segments.entries())
      expect(
        encodes.filter((part) => part.endsWith(`.${segmentFileName(k)}.part`)),
        `segment ${k}`,
      ).toHaveLength(3);
  });

  it('copies each finished HLS folder and mp4 to <out>/<id>/', async () => {
    expect(readdirSync(outDir).sort()).toEqual(lines.map((l) => l.id).sort());
    for (const l of lines) {
      const folder = path.join(outDir, l.id);
      expect(l.out).toBe(folder);
      expect(readdirSync(folder).filter((f) => f.startsWith('.') || f.includes('.part'))).toEqual([]);
      const playlist = parsePlaylist(path.join(folder, 'video.m3u8'));
      expect(playlist.endList).toBe(true);
      expect(playlist.segments).toHaveLength((await clip()).segments.length);
      for (const s of playlist.segments) expect(existsSync(path.join(folder, s.uri))).toBe(true);
      await decodesCleanly(path.join(folder, 'video.mp4'));
    }
  });

  it("each output carries its own row's text: it matches a plain ffmpeg render of that text and not the others'", async () => {
    const references = await Promise.all(ROWS.map(rowReference));
    const frames = await Promise.all(lines.map((l) => decodeFrame(path.join(outDir, l.id, 'video.m3u8'), 1, SIZE)));
    const mp4Frames = await Promise.all(lines.map((l) => decodeFrame(path.join(outDir, l.id, 'video.mp4'), 1, SIZE)));
    for (let i = 0; i < ROWS.length; i++) {
      const own = difference(frames[i]!, references[i]!);
      expect(own.mean, `row ${i} vs its own text`).toBeLessThan(6);
      expect(own.maxBlock, `row ${i} vs its own text`).toBeLessThan(30);
      expect(difference(mp4Frames[i]!, references[i]!).maxBlock, `row ${i} mp4`).toBeLessThan(30);
      for (let j = 0; j < ROWS.length; j++) {
        if (j === i) continue;
        expect(difference(frames[i]!, references[j]!).maxBlock, `row ${i} vs row ${j}'s text`).toBeGreaterThan(45);
      }
    }
  });
});

describe('a batch with a bad row', () => {
  it('fails as a whole before any encode, naming each bad line (exit 2)', async () => {
    const file = path.join(dir, 'bad.ndjson');
    writeFileSync(
      file,
      [
        JSON.stringify({ name: 'Carol', email: 'carol@example.com' }),
        JSON.stringify({ name: 'Dave' }),
        JSON.stringify({ name: 'Erin', email: 'erin@example.com', phone: '555' }),
      ].join('\n'),
    );
    const logged = existsSync(log) ? loggedEncodes(log).length : 0;
    const watermarksBefore = await countWatermarks();
    const res = await runCli(
      ['--json', '--data-dir', dataDir, 'watermark', '--key', KEY, '--template', 'viewer-corner', '--batch', file, '--out', path.join(dir, 'bad-out')],
      { env, cwd: dir },
    );
    expect(res.code).toBe(2);
    const { error } = res.json<{ error: { code: string; message: string; details?: string[] } }>();
    expect(error.code).toBe('BATCH_INVALID');
    const details = (error.details ?? [error.message]).join('\n');
    expect(details).toMatch(/line 2\b.*missing value for placeholder "email"/);
    expect(details).toMatch(/line 3\b.*"phone" is not used/);
    expect(details).not.toMatch(/line 1\b/);
    // Nothing was started: no encode, no watermark, no output folder.
    expect(loggedEncodes(log).length).toBe(logged);
    expect(await countWatermarks()).toBe(watermarksBefore);
    expect(existsSync(path.join(dir, 'bad-out'))).toBe(false);
  });

  it('a CSV column the template does not use fails every row the same way (exit 2, no encodes)', async () => {
    const file = path.join(dir, 'extra-column.csv');
    writeFileSync(file, csv('name,email,phone', ['Fay,fay@example.com,1', 'Gus,gus@example.com,2']));
    const logged = loggedEncodes(log).length;
    const res = await runCli(['--json', '--data-dir', dataDir, 'watermark', '--key', KEY, '--template', 'viewer-corner', '--batch', file], { env, cwd: dir });
    expect(res.code).toBe(2);
    const { error } = res.json<{ error: { details?: string[]; message: string } }>();
    const details = (error.details ?? [error.message]).join('\n');
    expect(details).toMatch(/line 2\b.*"phone"/);
    expect(details).toMatch(/line 3\b.*"phone"/);
    expect(loggedEncodes(log).length).toBe(logged);
  });
});

async function countWatermarks(): Promise<number> {
  const e = await testEngine({ dataDir });
  try {
    return (await e.store.listWatermarks()).length;
  } finally {
    await e.dispose();
  }
}
