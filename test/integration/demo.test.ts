// `wmark demo` shows the product: its generated sample is a smooth, colourful, moving scene (not noise), the mark it
// draws is legible (opaque, shadowed, in strong contrast with the picture under it), and every path it prints is
// absolute.
import { appendFileSync, existsSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliIn, type Sandbox, sandbox } from '../../harness/cli-helpers.js';
import { decodeFrame, type RgbFrame } from '../helpers/media.js';

const SIZE = { width: 640, height: 360 };
let box: Sandbox;
let demo: any;

beforeAll(async () => {
  box = sandbox('demo');
  const r = await cliIn(box)(['--json', 'demo', '--port', '0', '--viewer', 'Grace Hopper', '--email', 'grace@example.com']);
  expect(r.code, r.stderr).toBe(0);
  demo = r.json();
}, 300_000);

afterAll(() => box?.dispose());

const luma = ([r, g, b]: [number, number, number]) => 0.2126 * r + 0.7152 * g + 0.0722 * b;

function hueBin([r, g, b]: [number, number, number]): number | undefined {
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  if (max - min < 25) return undefined; // too grey to have a hue
  let h: number;
  if (max === r) h = ((g - b) / (max - min) + 6) % 6;
  else if (max === g) h = (b - r) / (max - min) + 2;
  else h = (r - g) / (max - min) + 4;
  return Math.floor(h * 2); // 12 bins of 30 degrees
}

function stats(f: RgbFrame) {
  const bins = new Map<number, number>();
  let ys = 0;
  let ys2 = 0;
  let grain = 0;
  let n = 0;
  for (let y = 0; y < f.height; y += 2) {
    for (let x = 0; x < f.width - 1; x += 2) {
      const p = f.at(x, y);
      const bin = hueBin(p);
      if (bin !== undefined) bins.set(bin, (bins.get(bin) ?? 0) + 1);
      const l = luma(p);
      ys += l;
      ys2 += l * l;
      grain += Math.abs(l - luma(f.at(x + 1, y)));
      n++;
    }
  }
  const mean = ys / n;
  // Hue bins holding at least 2 % of the sampled pixels.
  const hues = [...bins.values()].filter((c) => c > n * 0.02).length;
  return { hues, stddev: Math.sqrt(ys2 / n - mean * mean), grain: grain / n };
}

function meanAbsDiff(a: RgbFrame, b: RgbFrame): number {
  let d = 0;
  for (let i = 0; i < a.data.length; i++) d += Math.abs(a.data[i]! - b.data[i]!);
  return d / a.data.length;
}

describe('wmark demo', () => {
  it('prints absolute paths for the sample and the watermark files, which exist', () => {
    expect(path.isAbsolute(demo.sample)).toBe(true);
    expect(demo.sample.startsWith(box.dataDir)).toBe(true);
    expect(existsSync(demo.sample)).toBe(true);
    expect(path.isAbsolute(demo.files)).toBe(true);
    expect(existsSync(path.join(demo.files, 'video.mp4'))).toBe(true);
    expect(demo.ready.status).toBe('READY');
  });

  it('the sample is a smooth scene with colour variety and motion, not noise', async () => {
    const [a, b, c] = await Promise.all([1, 6, 15].map((t) => decodeFrame(demo.sample, t, SIZE)));
    for (const f of [a!, b!, c!]) {
      const s = stats(f);
      expect(s.hues, JSON.stringify(s)).toBeGreaterThanOrEqual(4);
      expect(s.stddev, JSON.stringify(s)).toBeGreaterThan(25);
      // Gradients: neighbouring pixels differ by less than 2 levels on average (grain or noise gives far more).
      expect(s.grain, JSON.stringify(s)).toBeLessThan(2);
    }
    expect(meanAbsDiff(a!, b!)).toBeGreaterThan(4);
    expect(meanAbsDiff(b!, c!)).toBeGreaterThan(4);
  });

  it('the mark is opaque and shadowed, and reads in strong contrast on the picture', async () => {
    const [setting] = demo.settings;
    expect(setting.fontOpacity).toBeGreaterThanOrEqual(0.6);
    expect(setting.shadowOpacity).toBeGreaterThan(0.5);
    expect(setting.content).toBe('Grace Hopper\ngrace@example.com');

    const t = 8;
    const [marked, plain] = await Promise.all([decodeFrame(path.join(demo.files, 'video.mp4'), t, SIZE), decodeFrame(demo.sample, t, SIZE)]);
    // Text pixels: much brighter than the same pixel without the mark. They lie in the bottom-right corner only.
    let text = 0;
    let outside = 0;
    let textLuma = 0;
    let backLuma = 0;
    for (let y = 0; y < SIZE.height; y++) {
      for (let x = 0; x < SIZE.width; x++) {
        const m = luma(marked.at(x, y));
        const p = luma(plain.at(x, y));
        if (m - p <= 60) continue;
        if (x < SIZE.width * 0.4 || y < SIZE.height * 0.7) outside++;
        else {
          text++;
          textLuma += m;
          backLuma += p;
        }
      }
    }
    expect(outside).toBe(0);
    expect(text).toBeGreaterThan(400);
    // WCAG-style contrast of the text against the picture it covers.
    const rel = (l: number) => (l / 255) ** 2.2;
    const contrast = (rel(textLuma / text) + 0.05) / (rel(backLuma / text) + 0.05);
    expect(contrast, `text ${textLuma / text}, background ${backLuma / text}`).toBeGreaterThan(4.5);
  });
});

describe('wmark demo again', () => {
  it('says it reuses the sample and its ingest, and its closing text reads as two sentences', async () => {
    const r = await cliIn(box)(['demo', '--port', '0', '--no-keep-serving', '--viewer', 'Grace Hopper', '--email', 'grace@example.com']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`1/4 reusing the sample video made by an earlier demo (${demo.sample})`);
    expect(r.stderr).toContain('2/4 the sample is ingested already (key wmark-sample)');
    expect(r.stderr).not.toMatch(/generating the sample|ingesting it into/);
    const port = new URL(/^service +(\S+)/m.exec(r.stdout)![1]!).port;
    expect(r.stdout).toContain(
      `The service stops when this command ends. Afterwards, \`wmark --data-dir ${box.dataDir} serve --port ${port}\` plays these links again,\n` +
        `and \`wmark --data-dir ${box.dataDir} watermark view ${demo.ready.id ?? demo.response.id}\` prints fresh links for whichever \`wmark serve\` runs on this data folder.`,
    );
  }, 300_000);

  it('takes its key back for a sample made again since its ingest, instead of refusing its own earlier run', async () => {
    // The same sample, rewritten later with other bytes: the key names the file as it was, so the demo ingests anew.
    appendFileSync(demo.sample, Buffer.alloc(16));
    const later = new Date(Date.now() + 60_000);
    utimesSync(demo.sample, later, later);
    const r = await cliIn(box)(['demo', '--port', '0', '--no-keep-serving', '--viewer', 'Grace Hopper', '--email', 'grace@example.com']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('the sample under key wmark-sample was made again since its ingest: ingesting it anew');
    expect(r.stderr).toContain('2/4 ingesting it into closed-GOP working segments');
    expect(r.stdout).toMatch(/READY/);
  }, 300_000);
});
