// Detection on titles whose content repeats itself (no ffmpeg): slideshows of stills cut every 2 s, where a stretch of
// the leak fits several places of the original equally well. Alignment must offer each place, and the payload must
// pick the right one: an exact loop of an earlier 30-s stretch, a slideshow that comes back to its pictures (played
// as is, at 1.04x and at 0.96x), and a leak spliced from two parts that each occur twice. Null trials on the same
// titles (unmarked copies, another title's codes) must accuse no one.
import { describe, expect, it } from 'vitest';
import { CANDIDATE_MARGIN } from '../../../src/core/forensic/alignment-candidates.js';
import { analyseLeak } from '../../../src/core/forensic/analyse.js';
import type { LeakFrames } from '../../../src/core/forensic/detect-inputs.js';
import { codeword, packedCodebook } from '../../../src/core/forensic/keyed-bits.js';
import { normalTail, raisedThreshold, Z_THRESHOLD } from '../../../src/core/forensic/score.js';
import { leakSignatures, type SyntheticTitle, syntheticLeak, syntheticTitle } from '../../helpers/forensic-helpers.js';

const SEGMENT_SECONDS = 2;
const SEGMENTS = 150;
const FPS = 10;
const VIEWER = 31337;

/** A 5-minute slideshow (one still per 2-s segment) whose segment k shows the picture of segment `picture(k)`. */
function repeatingTitle(seed: number, picture: (k: number) => number): SyntheticTitle {
  const t = syntheticTitle({ seed, segments: SEGMENTS, segmentSeconds: SEGMENT_SECONDS, fps: FPS });
  const s = t.sidecar;
  const n = s.width * s.height;
  const own = Float32Array.from(s.mean);
  for (let k = 0; k < SEGMENTS; k++) s.mean.set(own.subarray(picture(k) * n, picture(k) * n + n), k * n);
  // The alignment signature ingest would keep: the title itself, unmarked, with a little grain.
  const whole = syntheticLeak(t, { signs: new Array<number>(SEGMENTS).fill(0), noise: 1, seed: seed + 100 }).leak;
  s.signatureTimes = whole.times;
  s.signature = leakSignatures(whole);
  return t;
}

function detect(t: SyntheticTitle, leak: LeakFrames, book = packedCodebook(t.key, t.videoId, SEGMENTS)) {
  return analyseLeak(t.sidecar, leak, leak.times, leakSignatures(leak), book);
}

const viewerSigns = (t: SyntheticTitle, payload = VIEWER) => Array.from(codeword(t.key, t.videoId, payload, SEGMENTS));

/** Two excerpts of one title, back to back. */
function splice(a: LeakFrames, b: LeakFrames): LeakFrames {
  const times = Float64Array.from([...a.times, ...Array.from(b.times, (t) => a.times.at(-1)! + 1 / FPS + t)]);
  const frames = new Uint16Array(a.frames.length + b.frames.length);
  frames.set(a.frames);
  frames.set(b.frames, a.frames.length);
  return { width: a.width, height: a.height, times, frames };
}

/** An exact loop: segments 75-89 (150-180 s) show 30-44 (60-90 s) again. */
const loop = repeatingTitle(3, (k) => (k >= 75 && k < 90 ? k - 45 : k));
/** Pictures that come back every 96 s (48 segments), as a test card whose hue cycles. */
const cycling = repeatingTitle(4, (k) => k % 48);
/** Two 30-s scenes that each come back once: 20-50 s again at 180-210 s, 100-130 s again at 240-270 s. */
const twoScenes = repeatingTitle(5, (k) => (k >= 90 && k < 105 ? k - 80 : k >= 120 && k < 135 ? k - 70 : k));

describe('detect on content that repeats itself', { timeout: 120_000 }, () => {
  it('names the viewer of a leak taken from the second occurrence of a loop', () => {
    const { leak } = syntheticLeak(loop, { signs: viewerSigns(loop), from: 150, to: 270, seed: 4, noise: 2 });
    const a = detect(loop, leak);
    expect(a.verdict.accused).toEqual([VIEWER]);
    expect(a.map.pieces[0]!.offset).toBeCloseTo(150, 0);
  });

  it('reads every place a cycling slideshow fits, and the payload picks the true one (96 s from the best picture fit)', () => {
    const { leak } = syntheticLeak(cycling, { signs: viewerSigns(cycling), from: 100, to: 220, seed: 4, noise: 2 });
    const a = detect(cycling, leak);
    const places = a.candidates.map((c) => Math.round(c.offsetSeconds));
    expect(places).toEqual(expect.arrayContaining([4, 100, 196]));
    const best = Math.max(...a.candidates.map((c) => c.alignmentScore));
    for (const c of a.candidates) expect(c.alignmentScore).toBeGreaterThanOrEqual(best - CANDIDATE_MARGIN - 0.01);
    const chosen = a.candidates.find((c) => c.chosen)!;
    expect(Math.round(chosen.offsetSeconds)).toBe(100);
    expect(a.verdict.accused).toEqual([VIEWER]);
    // The wrong places read real slots whose codes match no one.
    for (const c of a.candidates.filter((x) => !x.chosen)) expect(c.z).toBeLessThan(5);
    // Held to the bar of every alignment read.
    expect(a.verdict.threshold).toBeCloseTo(raisedThreshold(Z_THRESHOLD, a.candidates.length), 6);
    expect(a.verdict.threshold).toBeGreaterThan(Z_THRESHOLD);
  });

  it.each([1.04, 0.96])('names the viewer of the cycling slideshow played at %sx, read over the whole leak', (speed) => {
    const { leak } = syntheticLeak(cycling, { signs: viewerSigns(cycling), from: 100, to: 100 + 125 * speed, speed, seed: 6, noise: 2 });
    const a = detect(cycling, leak);
    expect(a.verdict.accused).toEqual([VIEWER]);
    const chosen = a.map.pieces;
    expect(Math.abs(chosen[0]!.scale - speed)).toBeLessThan(0.005);
    expect(a.alignedSeconds).toBeGreaterThan(110);
  });

  it('names the viewer of a leak spliced from two parts that each occur twice', () => {
    const signs = viewerSigns(twoScenes);
    // 150-210 s ends on the repeat of one scene and 240-300 s starts on the repeat of the other: both sides of the
    // splice fit two places each.
    const leak = splice(
      syntheticLeak(twoScenes, { signs, from: 150, to: 210, seed: 7, noise: 2 }).leak,
      syntheticLeak(twoScenes, { signs, from: 240, to: 300, seed: 8, noise: 2 }).leak,
    );
    const a = detect(twoScenes, leak);
    expect(a.verdict.accused).toEqual([VIEWER]);
  });

  it('accuses no one in unmarked copies or under another title’s codes (null trials)', () => {
    const nulls: number[] = [];
    const other = packedCodebook(Buffer.alloc(32, 7), 'another-title', SEGMENTS);
    for (const [t, from] of [
      [loop, 150],
      [cycling, 100],
      [twoScenes, 90],
    ] as const) {
      for (const seed of [11]) {
        const unmarked = syntheticLeak(t, { signs: new Array<number>(SEGMENTS).fill(0), from, to: from + 120, seed, noise: 2 }).leak;
        const a = detect(t, unmarked);
        expect(a.verdict.accused).toEqual([]);
        nulls.push(a.verdict.best?.z ?? 0);
      }
      const marked = syntheticLeak(t, { signs: viewerSigns(t), from, to: from + 120, seed: 13, noise: 2 }).leak;
      const b = detect(t, marked, other);
      expect(b.verdict.accused).toEqual([]);
      nulls.push(b.verdict.best?.z ?? 0);
    }
    const maxNull = Math.max(...nulls);
    console.log(
      `repeating content: ${nulls.length} null trials, max null z ${maxNull.toFixed(2)} (a single payload reaches it by chance with p ${normalTail(maxNull).toExponential(1)})`,
    );
    expect(maxNull).toBeLessThan(Z_THRESHOLD);
  });
});
