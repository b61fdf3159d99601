// Child process of test/unit/core/forensic-sidecar-memory.test.ts: encodes and decodes a sidecar of a long title under a
// small V8 heap (--max-old-space-size), so any copy of its arrays into JS lists runs out of memory. Prints what it read.

import type { Sidecar } from '../../src/core/forensic/detect-inputs.js';
import { decodeSidecar, encodeSidecar } from '../../src/core/forensic/sidecar-format.js';

const slots = Number(process.argv[2]);
const frames = Number(process.argv[3]);
const width = 128,
  height = 72,
  diffWidth = 64,
  diffHeight = 36,
  n = width * height,
  dn = diffWidth * diffHeight;
// Typed arrays live outside the V8 heap: only JS lists of their values would count against its limit.
const mean = new Float32Array(slots * n);
const diff = new Float32Array(slots * dn);
const signature = new Float32Array(frames * 16);
for (let i = 0; i < mean.length; i++) mean[i] = ((i * 7919) % 255) + 0.25;
for (let i = 0; i < diff.length; i++) diff[i] = ((i % 5) - 2) * 0.5;
for (let i = 0; i < signature.length; i++) signature[i] = (i * 31) % 200;
const segments = slots / 2;
const sidecar: Sidecar = {
  version: 2,
  width,
  height,
  diffWidth,
  diffHeight,
  fps: 30,
  segmentStarts: Array.from({ length: segments }, (_, k) => 4 * k),
  segmentDurations: new Array<number>(segments).fill(4),
  slotStarts: Array.from({ length: slots }, (_, j) => 2 * j),
  slotDurations: new Array<number>(slots).fill(2),
  slotSegments: Array.from({ length: slots }, (_, j) => j >> 1),
  mean,
  diff,
  signature,
  signatureTimes: Float64Array.from({ length: frames }, (_, i) => i / 30),
};
const bytes = encodeSidecar(sidecar);
const back = decodeSidecar(bytes);
let meanErr = 0;
for (let i = 0; i < mean.length; i++) meanErr = Math.max(meanErr, Math.abs(back.mean[i]! - mean[i]!));
process.stdout.write(
  JSON.stringify({
    mean: back.mean.length,
    diff: back.diff.length,
    signature: back.signature.length,
    frames: back.signatureTimes.length,
    meanErr,
    lastDiff: back.diff[back.diff.length - 1],
    lastTime: back.signatureTimes[frames - 1],
  }),
);
