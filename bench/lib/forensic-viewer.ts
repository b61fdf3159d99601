// The cost of a new forensic viewer (the forensic bench's F4): building the viewer's playlist, timed in a child
// process of its own so that the heap of the suite that asks (the forensic bench holds codebooks and decoded frames)
// does not distort a figure of tens of microseconds. The child is forensic-viewer-child.ts.
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { forensicKey } from '../../src/core/forensic/keyed-bits.js';
import { SPLIT_MIN_SECONDS } from '../../src/core/forensic/variant-plan.js';

const execFileP = promisify(execFile);
const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'forensic-viewer-child.ts');

/** What the child needs to build a viewer's playlist as the engine does: the title's key, id, layout and segments. */
export interface ForensicViewerSpec {
  keyHex: string;
  videoId: string;
  layoutVersion: 1 | 2;
  slotsPerSegment: number[];
  /** Segment durations in seconds. */
  segments: number[];
  /** Playlists built per timed repetition. */
  iterations: number;
}

export interface ForensicViewerTiming {
  /** Mean microseconds per playlist (writeMediaPlaylist over the title's segments), median of 7 repetitions. */
  playlistUs: number;
  /** The same with the viewer's codeword computed and mapped to variant files: the whole per-viewer work. */
  playlistWithCodewordUs: number;
  playlistBytes: number;
  segments: number;
  /** Per-repetition means, to show the spread. */
  samplesUs: number[];
  samplesWithCodewordUs: number[];
}

/** Runs the child with `node --import tsx` and returns what it measured. */
export async function measureForensicViewer(spec: ForensicViewerSpec): Promise<ForensicViewerTiming> {
  const child = execFileP(process.execPath, ['--import', import.meta.resolve('tsx'), CHILD], { maxBuffer: 1024 * 1024 });
  child.child.stdin!.end(JSON.stringify(spec));
  const { stdout } = await child;
  return JSON.parse(stdout) as ForensicViewerTiming;
}

/**
 * A title that needs no encode: `seconds` long in `segmentSeconds` segments, a random key and id, two code slots in
 * every segment long enough to be split (the layout --forensic ingest writes today).
 */
export function syntheticViewerSpec(seconds: number, segmentSeconds: number, iterations: number): ForensicViewerSpec {
  const segments: number[] = [];
  for (let left = seconds; left > 1e-9; left -= segmentSeconds) segments.push(Math.min(segmentSeconds, left));
  return {
    keyHex: forensicKey(randomBytes(32)).toString('hex'),
    videoId: randomUUID(),
    layoutVersion: 2,
    slotsPerSegment: segments.map((d) => (d >= SPLIT_MIN_SECONDS - 1e-6 ? 2 : 1)),
    segments,
    iterations,
  };
}
