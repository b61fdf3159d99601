// False accusations at the score level: 10,000 verdicts on readings that carry no mark of the payloads scored (noise of three kinds,
// and marked readings scored against other titles' codebooks) accuse nobody, and the false-accusation estimate they
// report stays small. Slow (about a minute): runs only with WMARK_SLOW=1.
import { describe, expect, it } from 'vitest';
import { rng } from '../../harness/rng.js';
import { codeword, packedCodebook } from '../../src/core/forensic/keyed-bits.js';
import { type SegmentReading, scorePayloads } from '../../src/core/forensic/score.js';

const SLOTS = 150;

describe('10,000 null trials', () => {
  it('accuse nobody', () => {
    const r = rng(2024);
    const book = packedCodebook(Buffer.alloc(32, 1), 'title', SLOTS);
    let accusations = 0,
      maxZ = 0;
    for (let i = 0; i < 10_000; i++) {
      let readings: SegmentReading[];
      if (i % 4 === 3) {
        // A clean, fully marked leak of another title (or under another key) scored against this one.
        const c = codeword(Buffer.alloc(32, 2 + (i % 7)), `other-${i}`, i % 65536, SLOTS);
        readings = Array.from(c, (v, j) => ({ segment: j, value: v + 0.2 * r.gauss(), frames: 60 }));
      } else {
        const kind = i % 4;
        readings = Array.from({ length: SLOTS }, (_, j) => {
          const v = kind === 0 ? 0.3 * r.gauss() : kind === 1 ? r.gauss() : r.gauss() / Math.max(0.05, Math.abs(r.gauss()));
          return { segment: j, value: Math.max(-2, Math.min(2, v)), frames: 60 };
        });
      }
      const v = scorePayloads(readings, book, { maxAccused: 1 });
      if (v.accused.length) accusations++;
      maxZ = Math.max(maxZ, v.best?.z ?? 0);
    }
    expect(accusations).toBe(0);
    expect(maxZ).toBeLessThan(6.5);
  });
});
