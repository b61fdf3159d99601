// Whether this process renders marks in bands: it needs the patched x264 (WMARK_X264, else where
// scripts/build-x264.sh installs it), and WMARK_BAND=off turns it off for the whole process (the bench, an operator
// who wants whole-frame renders). Without it, titles are ingested and watermarks rendered as before; the reason is
// said once per process.
import { locateBandX264 } from '../../ffmpeg/locate-x264.js';

export interface BandSupport {
  /** The patched x264 CLI; absent when band rendering is off. */
  x264?: string;
  /** Why band rendering is off (shown with every watermark that renders in full because of it). */
  off?: string;
  /** Turned off on purpose (WMARK_BAND=off, a render farm): nothing to tell the operator at ingest. */
  chosen?: boolean;
}

export function bandSupport(env: NodeJS.ProcessEnv = process.env): BandSupport {
  if (env.WMARK_BAND === 'off') return { off: 'band rendering off: WMARK_BAND=off', chosen: true };
  const x264 = locateBandX264(env);
  if (!x264) return { off: 'band rendering off: patched x264 not found (build it with scripts/build-x264.sh, or set WMARK_X264)' };
  return { x264 };
}

const said = new Set<string>();

/** Writes `message` to stderr the first time this process says it. */
export function sayOnce(message: string, write: (line: string) => void = (line) => process.stderr.write(line)): void {
  if (said.has(message)) return;
  said.add(message);
  write(`wmark: ${message}\n`);
}
