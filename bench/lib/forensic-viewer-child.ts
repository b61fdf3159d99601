// Child process of bench/lib/forensic-viewer.ts: reads a ForensicViewerSpec on stdin, builds a new viewer's playlist
// many times in this otherwise empty heap, and prints the timings as JSON on stdout.
import { performance } from 'node:perf_hooks';
import { text } from 'node:stream/consumers';
import { codeword, PAYLOAD_COUNT } from '../../src/core/forensic/keyed-bits.js';
import { makeLayout, variantFileFor } from '../../src/core/forensic/title-layout.js';
import { segmentFileName } from '../../src/core/plan/segment-timing.js';
import { writeMediaPlaylist } from '../../src/core/playlist.js';
import type { ForensicViewerSpec, ForensicViewerTiming } from './forensic-viewer.js';
import { median } from './measure.js';

const WARMUP = 200;
const REPETITIONS = 7;

const spec = JSON.parse(await text(process.stdin)) as ForensicViewerSpec;
const key = Buffer.from(spec.keyHex, 'hex');
const layout = makeLayout(spec.layoutVersion, spec.slotsPerSegment);
// The target duration must not change while a playlist grows, so the engine computes it once from all segments.
const targetDuration = Math.max(1, Math.ceil(Math.max(...spec.segments)));

/** Viewer u's playlist, as forensic.ts has always timed it: with the codeword mapped to variant files, or without. */
function viewerPlaylist(u: number, withCode: boolean): string {
  const code = withCode ? codeword(key, spec.videoId, u, layout.slots) : undefined;
  return writeMediaPlaylist({
    segments: spec.segments.map((duration, i) => ({ uri: code ? variantFileFor(layout, code, i) : segmentFileName(i), duration })),
    ended: true,
    targetDuration,
  });
}

/** Mean microseconds per call in each of REPETITIONS runs of `iterations` calls, after a warm-up. */
function timeIt(fn: (i: number) => string): number[] {
  for (let i = 0; i < WARMUP; i++) fn(i);
  const samples: number[] = [];
  for (let rep = 0; rep < REPETITIONS; rep++) {
    const t0 = performance.now();
    for (let i = 0; i < spec.iterations; i++) fn(i);
    samples.push(((performance.now() - t0) * 1000) / spec.iterations);
  }
  return samples;
}

const samplesUs = timeIt((i) => viewerPlaylist(i % PAYLOAD_COUNT, false));
const samplesWithCodewordUs = timeIt((i) => viewerPlaylist(i % PAYLOAD_COUNT, true));
const result: ForensicViewerTiming = {
  playlistUs: median(samplesUs),
  playlistWithCodewordUs: median(samplesWithCodewordUs),
  playlistBytes: Buffer.byteLength(viewerPlaylist(0, false)),
  segments: spec.segments.length,
  samplesUs,
  samplesWithCodewordUs,
};
process.stdout.write(`${JSON.stringify(result)}\n`);
