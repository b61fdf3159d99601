// Suite `forensic-long` (F11: feature-length titles): a 2-hour forensic title, and `wmark detect` on a
// full-length leak of one viewer's copy. Targets: peak memory <= 1 GB and <= 5 minutes on 2 cores for the full leak;
// alignment costs no more than O(leak x log original).
//
// The title is GENERATED SMALL (default 320x180, 30 fps) and cheap: scenes of a few minutes, each its own random cloud
// texture, cut into shots of 3-8 s that jump to other places of it and pan, with a little grain: the picture never
// repeats (alignment needs that; checked below) and changes as a film's does.
// Everything after that is the real code path: `wmark ingest --forensic`, `wmark watermark --forensic U --containers
// mp4`, a re-encoded leak (0.5x, CRF 28) and `wmark detect --json`, each a child process measured under GNU time with
// the whole process tree's RSS sampled from /proc. Detection decodes every leak to 128x72 grey whatever its size, so
// only ffmpeg's decode depends on the title's resolution: part of a 720p leak (default 20 min; --hd-minutes 120 for all
// of it) is detected as well, and the full-length figure projected from that decode rate.
//
// Scaling: detect on excerpts of the leak (default 10, 30 and 120 min) gives alignment's cost per leak-minute (the
// CLI's JSON times each step); in process, alignPieces on the 10-min excerpt against the first 15, 30, 60, 120 min of
// the original shows how its cost grows with the original.
//
// Options (npm run bench -- forensic-long --name value):
//   --hours H          title length (default 2)                 --height H     title height, 16:9 (default 180)
//   --fps F            title frame rate (default 30)            --scene-min M  minutes per generated scene (default 5)
//   --leak-scale F     leak size relative to the title (default 0.5)          --leak-crf N   leak CRF (default 28)
//   --scaling LIST     leak lengths in minutes for the scaling runs (default 10,30,120; clipped to the title)
//   --hd-minutes M     minutes of a 1280x720 leak detected to measure a 720p decode (default 20: long enough to be
//                      decoded as a full-length leak is; the title's length: a full 720p leak, measured; 0: skip)
//   --payload U        the viewer's payload (default 20011)     --quiet-wait S before each timed detect (default 10)
//   --reingest         ingest again (default: reuse the ingest, viewer and leaks cached under bench/out/forensic-long)
import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { decodeSidecar } from '../src/core/forensic/sidecar-format.js';
import { alignmentVsOriginal, contentCheck } from './forensic-long-align.js';
import { fullLeak, hdLeak, ingestOnce, type LongRun, MB, scalingLeaks, startLongRun, titleFiles, viewerOnce } from './forensic-long-copies.js';
import { type DetectRun, detectRun } from './forensic-long-detect.js';
import { longOptions } from './forensic-long-options.js';
import { type LongResults, longJson, longReport } from './forensic-long-report.js';
import { longTitle } from './forensic-long-title.js';
import { REPO_ROOT, type Suite, type SuiteContext, warnIfDistStale } from './lib/suite.js';
import { mediaDuration } from './lib/video.js';

/** The ingest, the viewer and the leaks (each kept from an earlier run when it can be), then every detect run. */
async function copiesAndRuns(run: LongRun, titleFile: string) {
  const { state, reused } = await ingestOnce(run, titleFile);
  const files = titleFiles(run, state);
  const viewer = await viewerOnce(run, state);
  const full = await fullLeak(run, viewer.mp4);
  const leaks = await scalingLeaks(run, full);
  const hd = await hdLeak(run, viewer.mp4);
  const runs: DetectRun[] = [];
  if (hd) runs.push(await detectRun(run, hd));
  for (const l of leaks) runs.push(await detectRun(run, l));
  return { state, reused, files, viewer, full, small: leaks[0]!, runs, hd: hd ? runs[0] : undefined };
}

async function measure(ctx: SuiteContext, run: LongRun, entry: string, title: Awaited<ReturnType<typeof longTitle>>): Promise<LongResults> {
  const { o } = run;
  const titleSeconds = await mediaDuration(ctx.tools.ffprobe.path, title.file);
  const { state, reused, files, viewer, full, small, runs, hd } = await copiesAndRuns(run, title.file);
  run.log(`[${run.elapsed()}] in process: fingerprints of the title, self-alignment, alignment vs original length ...`);
  const sidecar = decodeSidecar(await readFile(files.sidecarFile));
  const content = contentCheck(sidecar);
  const vsOriginal = await alignmentVsOriginal(run.ffmpeg, o.fps, o.minutes, sidecar, small);
  const decodedSidecarMB = (sidecar.mean.byteLength + sidecar.diff.byteLength + sidecar.signature.byteLength + sidecar.signatureTimes.byteLength) / MB;
  return {
    o,
    machine: ctx.machine,
    entry,
    title: { file: title.file, seconds: titleSeconds, bytes: statSync(title.file).size, scenes: title.scenes, generatedS: title.generatedS },
    content,
    state,
    viewer,
    ingestReused: reused,
    ingest: {
      slots: sidecar.slotStarts.length,
      workingBytes: files.workingBytes,
      variantBytes: files.variantBytes,
      sidecarBytes: files.sidecarBytes,
      decodedSidecarMB,
    },
    viewerBytes: statSync(viewer.mp4).size,
    leak: { width: full.width, height: full.height, bytes: statSync(full.file).size, file: full.file },
    runs,
    hd,
    small: { minutes: small.minutes, start: small.start },
    vsOriginal,
  };
}

export const suite: Suite = {
  name: 'forensic-long',
  description: 'F11: a 2-hour forensic title (generated small), wmark detect on a full-length leak: memory, time, alignment scaling',
  async run(ctx) {
    const o = longOptions(ctx.args.options);
    const suiteT0 = performance.now();
    warnIfDistStale(ctx.log);
    const entry = existsSync(path.join(REPO_ROOT, 'dist', 'cli', 'main.js'))
      ? 'dist/ (compiled)'
      : 'src/ through tsx (no dist/: the tsx loader and its esbuild service count in the tree RSS)';
    const title = await longTitle(ctx, { width: o.width, height: o.height, fps: o.fps, minutes: o.minutes, sceneMinutes: o.sceneMinutes });
    const run = await startLongRun(ctx, o, title.file, suiteT0);
    const results = await measure(ctx, run, entry, title);
    process.stdout.write(`${longReport(results).join('\n')}\n`);
    return longJson(results);
  },
};
