// Whether this process renders marks in bands: it needs the patched x264 (WMARK_X264, else where
// scripts/build-x264.sh installs it), and WMARK_BAND=off turns it off for the whole process (the bench, an operator
// who wants whole-frame renders). Without it, titles are ingested and watermarks rendered as before; the reason is
// said once per process. An x264 built from an older patch takes one band only: every splice of a title with a top and
// a bottom band would fail, so such a binary is not used (its --fullhelp text says which form it takes).
import { speaksSeveralBands } from '../../core/plan/band-plan.js';
import { locateBandX264 } from '../../ffmpeg/locate-x264.js';
import { runToEnd } from '../../ffmpeg/run-ffmpeg.js';

export interface BandSupport {
  /** The patched x264 CLI; absent when band rendering is off. */
  x264?: string;
  /** Why band rendering is off (shown with every watermark that renders in full because of it). */
  off?: string;
  /** Turned off on purpose (WMARK_BAND=off, a render farm): nothing to tell the operator at ingest. */
  chosen?: boolean;
}

export async function bandSupport(env: NodeJS.ProcessEnv = process.env, help: (x264: string) => Promise<string> = fullHelp): Promise<BandSupport> {
  if (env.WMARK_BAND === 'off') return { off: 'band rendering off: WMARK_BAND=off', chosen: true };
  const x264 = locateBandX264(env);
  if (!x264) return { off: 'band rendering off: patched x264 not found (build it with scripts/build-x264.sh, or set WMARK_X264)' };
  if (!speaksSeveralBands(await help(x264)))
    return { off: `band rendering off: ${x264} takes one band only (built from an older patch: rebuild it with scripts/build-x264.sh)` };
  return { x264 };
}

/** How long x264 may take to print its help before it counts as not running. */
const HELP_DEADLINE_MS = 10_000;
const helps = new Map<string, Promise<string>>();

/**
 * x264's --fullhelp text (empty when it does not run, fails or takes too long), asked once per binary and process,
 * through the runner every process of wmark's goes through (killed with wmark, stopped at the deadline).
 */
function fullHelp(x264: string): Promise<string> {
  let text = helps.get(x264);
  if (text === undefined) {
    text = runToEnd(x264, ['--fullhelp'], { signal: AbortSignal.timeout(HELP_DEADLINE_MS) }).then((run) =>
      run.code === 0 && !run.error ? run.stdout.toString('utf8') : '',
    );
    helps.set(x264, text);
  }
  return text;
}

const said = new Set<string>();

/** Writes `message` to stderr the first time this process says it. */
export function sayOnce(message: string, write: (line: string) => void = (line) => process.stderr.write(line)): void {
  if (said.has(message)) return;
  said.add(message);
  write(`wmark: ${message}\n`);
}
