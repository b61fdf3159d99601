// The band-ingest suite's tables: one row per clip with each step's median CPU, and option B's two mezzanines per clip.
import { describe, expect, it } from 'vitest';
import { type ClipResult, type Round, report } from '../band-ingest-report.js';
import { spread } from '../lib/band-figures.js';

const round = (today: number, decode: number): Round => ({
  today,
  steps: { decode, rows: 0.5, shared: 2, mux: 0.1, firstWallS: 0.4, allWallS: 3, bytes: 1000 },
  optionA: today * 1.2,
  optionB: today * 1.1,
});

describe('band-ingest report', () => {
  it('prints a row per clip, the median step CPU over rounds, and both mezzanines of option B', () => {
    const clip: ClipResult = {
      kind: 'motion',
      seconds: 4,
      segments: 2,
      rounds: [round(4, 1), round(5, 3), round(6, 2)],
      bandRatio: spread([1.9, 2, 2.1]),
      aRatio: spread([1.2]),
      bRatio: spread([1.1]),
      quality: { crf15: { psnr: 45.1234, ssim: 0.991, bytes: 900, renderCpuS: 1.5 }, shared: { psnr: 44, ssim: 0.99, bytes: 500, renderCpuS: 1.6 } },
    };
    const lines = report([clip], { clips: ['motion'], seconds: 4, height: 176 }).split('\n');
    expect(lines[0]).toMatch(/^band ingest: 176p25, 4 s per clip/);
    const row = lines.find((l) => l.startsWith('motion') && l.includes('5.00 (4.00-6.00)'));
    // today's spread, then the decode's median (2 of 1, 3, 2) and the band ratio's spread
    expect(row).toMatch(/5\.00 \(4\.00-6\.00\)\s+2\.00\s+0\.50\s+2\.00\s+0\.10\s+2\.000 \(1\.900-2\.100\)/);
    expect(lines.filter((l) => /^motion\s+(working form|shared encode) CRF/.test(l))).toHaveLength(2);
    expect(lines.some((l) => l.includes('45.123') && l.includes('0.99100'))).toBe(true);
  });
});
