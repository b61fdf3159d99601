// The text suite's statistics: medians per job over its rounds, and the wmark/ffmpeg ratio taken round by round.
import { describe, expect, it } from 'vitest';
import { type RoundResult, textJobFigures } from '../text-job.js';

const job = (wallS: number, cpuS: number, playableS: number | null) => ({ wallS, cpuS, userS: cpuS - 1, sysS: 1, playableS, otherCores: 0.1, outputDir: '' });
const round = (r: number, baseline: [number, number], wmark: [number, number, number | null]): RoundResult => ({
  round: r,
  text: `t${r}`,
  baseline: job(baseline[0], baseline[1], baseline[0]),
  wmark: { ...job(...wmark), watermarkId: `w${r}` },
});

describe('text job figures', () => {
  it('takes the median of each job and of the per-round ratios, not the ratio of medians', () => {
    const f = textJobFigures([round(1, [10, 20], [9, 18, 1]), round(2, [20, 40], [30, 50, 2]), round(3, [12, 24], [12, 20, 4])]);
    expect(f.median.baseline.wallS).toBe(12);
    expect(f.median.wmark.wallS).toBe(12);
    expect(f.median.wmark.playableS).toBe(2);
    expect(f.ratio.perRoundWall).toEqual([0.9, 1.5, 1]);
    expect(f.ratio.wall).toBe(1);
    expect(f.ratio.cpu).toBeCloseTo(0.9);
    expect(f.ratio.met).toBe(true);
    expect(f.playable).toMatchObject({ wmarkS: 2, target: 3, met: true });
  });

  it('misses the targets when wmark is slower or late to play, and leaves a round without a playlist out of the median', () => {
    const f = textJobFigures([round(1, [10, 20], [11, 22, null]), round(2, [10, 20], [12, 22, 5])]);
    expect(f.ratio.wall).toBeCloseTo(1.15);
    expect(f.ratio.met).toBe(false);
    expect(f.playable).toMatchObject({ wmarkS: 5, met: false });
  });
});
