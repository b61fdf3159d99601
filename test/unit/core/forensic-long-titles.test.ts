// Long titles (feature length). The sidecar of a long title encodes (ingest) and decodes (wmark detect) without a
// JS-heap copy of its arrays: a 2-hour title has 33 M mean values, and TypedArray.from(array, mapFn) would first turn
// them into a list of numbers (1.7 GB to encode, 1 GB to decode). And detection reports what each of its steps cost,
// so the bench (bench/forensic-long.ts) can show alignment's cost per leak-minute.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { analyseLeak } from '../../../src/core/forensic/analyse.js';
import { packedCodebook } from '../../../src/core/forensic/keyed-bits.js';
import { decodeSidecar, encodeSidecar } from '../../../src/core/forensic/sidecar-format.js';
import { leakSignatures, syntheticLeak, syntheticTitle } from '../../helpers/forensic-helpers.js';

const execFileP = promisify(execFile);
const CHILD = fileURLToPath(new URL('../../helpers/sidecar-heap-child.ts', import.meta.url));

describe('sidecar format: long titles', () => {
  // A 30-minute title's sidecar (8.3 M mean values) under a 48 MB V8 heap, in a child process: a list of its values
  // alone would need 66 MB or more.
  it("a 30-minute title's sidecar round-trips under a 48 MB JS heap", { timeout: 60_000 }, async () => {
    const slots = 900,
      frames = 54_000;
    const { stdout } = await execFileP(process.execPath, ['--max-old-space-size=48', '--import', 'tsx', CHILD, String(slots), String(frames)], {
      maxBuffer: 1 << 20,
    });
    const r = JSON.parse(stdout) as { mean: number; diff: number; signature: number; frames: number; meanErr: number; lastDiff: number; lastTime: number };
    expect(r).toMatchObject({ mean: slots * 128 * 72, diff: slots * 64 * 36, signature: frames * 16, frames });
    expect(r.meanErr).toBeLessThanOrEqual(0.5 / 64 + 1e-6);
    expect(r.lastDiff).toBeCloseTo((((slots * 64 * 36 - 1) % 5) - 2) * 0.5, 3);
    expect(r.lastTime).toBeCloseTo((frames - 1) / 30, 9);
  });
});

describe('sidecar format: damaged files', () => {
  it('a truncated sidecar is an error, not a title of zeros', () => {
    const { sidecar } = syntheticTitle({ seed: 5, segments: 6 });
    const raw = gunzipSync(encodeSidecar({ ...sidecar, signatureTimes: Float64Array.from([0, 0.2]), signature: new Float32Array(32).fill(9) }));
    expect(decodeSidecar(gzipSync(raw)).signature[31]).toBe(9);
    expect(() => decodeSidecar(gzipSync(raw.subarray(0, raw.length - 3)))).toThrow(/truncated forensic sidecar/);
  });
});

describe('analyseLeak', () => {
  it('times its steps (align, register, read, score)', () => {
    const title = syntheticTitle({ seed: 11, segments: 20 });
    const { leak } = syntheticLeak(title, { signs: new Array<number>(20).fill(1), from: 10, to: 60 });
    const a = analyseLeak(title.sidecar, leak, leak.times, leakSignatures(leak), packedCodebook(title.key, title.videoId, 20));
    expect(Object.keys(a.timings).sort()).toEqual(['align', 'read', 'realign', 'register', 'score']);
    for (const seconds of Object.values(a.timings)) expect(seconds).toBeGreaterThanOrEqual(0);
  });
});
