// Suite `forensic`: the A/B forensic watermark against its targets F1-F8 on a generated 5-min clip (default
// 720p30, 'natural': a camera pan over cloud texture with grain, audio).
//
//   ingest the clip twice (plain and --forensic: F8), issue N viewers (`wmark watermark --forensic U`: F4), attack each
//   viewer's rendered mp4 with plain ffmpeg and run detection on every leak (F1), short leaks (F2), mark quality and
//   bitrate (F3), `wmark detect` wall time (F5), null trials (F6) and two averaged copies (F7).
//
// Detection of the attacked leaks runs in-process (detectLeak from src/engine/detect.ts, the same code `wmark detect`
// runs, minus the process start); the frames it decodes are kept, so the bench can also compute the true payload's
// rank among all 65,536 and reuse the leak's per-segment readings for the score-level null trials. F5 is measured with
// the real CLI.
//
// Options (npm run bench -- forensic --name value):
//   --payloads N        viewers (default 5)                  --height H       clip height, 16:9 (default 720)
//   --seed S            payloads, offsets and noise          --threads T      ffmpeg threads for attacks (default 2)
//   --full-attacks M    full-resolution attacks (eq, 25 fps, blur+noise, crop) per payload: 'rotate' (each on one
//                       payload), 'all', or 'auto' (default: rotate, then the other cells while --budget-min allows, 45)
//   --null-codebooks N  other titles' codebooks every leak's readings are scored against (default 20)
//   --null-noise N      pure-noise readings scored against this title (default 1000)
//   --f3-segments N     segments sampled for F3, in neighbouring pairs (default 12)
//   --collusion-scale F re-encode size of F7's averaged copy (default 1)     --no-raw-null  skip detecting the raw source
//   --quiet-wait S      before each timed job, wait up to S s for a quiet machine (default 60)
//   --layout L          the forensic ingest's --forensic-layout: whole (default), split or single (docs/forensic.md)
//   --keep / --reuse    keep bench/out/forensic-run-<H>p[-<layout>]; reuse its ingests, viewers and downscaled leaks (development)
//   --only LIST         run only these parts (default: all): f1..f8, and the hard leaks' f2b (F2'), f9, f10, f7b (F7'), f6b (F6');
//                       also f9s (never by default): each camcorder step alone and the chain cut after each, on 100 s.
//                       The forensic ingest and the viewers' copies are always made; the plain ingest only for f8 and
//                       f6; F4's playlist timing only for f4. f6b scores the readings of the parts that ran (with f6:
//                       also the unmarked copies and other titles), e.g. `--only f9,f6,f6b` for the camcorder at 720p.
import { randomInt } from 'node:crypto';
import { statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { AttackLeaks } from './forensic-attack-leaks.js';
import { detectKeepingFrames } from './forensic-detect.js';
import { detectTime, stageMedians } from './forensic-detect-time.js';
import { type ForensicResults, forensicFigures, forensicJson } from './forensic-figures.js';
import { hardLeaks } from './forensic-hard-leaks.js';
import { averagedPair, nullCopies, shortLeaks } from './forensic-leaks.js';
import { noTrials, readingRms, scoreTrials } from './forensic-null-trials.js';
import { forensicOptions, SECONDS } from './forensic-options.js';
import { measureQuality } from './forensic-quality.js';
import { forensicReport } from './forensic-report.js';
import {
  drawPayloads,
  type ForensicRun,
  type Ingests,
  ingestBoth,
  makeViewers,
  openTitle,
  startRun,
  type Title,
  timeViewerPlaylist,
} from './forensic-setup.js';
import type { Suite, SuiteContext } from './lib/suite.js';

/** F6's score-level trials: the readings of the real copies (unmarked, other titles, marked leaks), and noise. */
function nullScoreTrials(run: ForensicRun, title: Title, readingSets: ForensicResults['nullReal'][number]['readings'][], unmarkedRms: number) {
  const { o } = run;
  if (!run.want('f6')) return { codebookTrials: noTrials(), noiseTrials: noTrials() };
  run.log(`[${run.elapsed()}] F6: ${o.nullCodebooks} codebook trials and ${o.nullNoise} noise trials ...`);
  const { key, segments, codes } = title;
  return scoreTrials({
    readingSets,
    unmarkedRms,
    key,
    seed: o.seed,
    slots: title.layout.slots,
    segments,
    codes,
    codebooks: o.nullCodebooks,
    noise: o.nullNoise,
    R: run.R,
  });
}

/** The hard leaks: F2' (2-min leaks), F9 (camcorder), F10 (speed, re-edit), F7' (three colluders), F6' (10,000 nulls). */
function runHardLeaks(
  run: ForensicRun,
  title: Title,
  viewers: { payload: number; mp4: string }[],
  readingSets: ForensicResults['nullReal'][number]['readings'][],
) {
  const { o } = run;
  return hardLeaks({
    detect: async (name, file, truth) => detectKeepingFrames(title, name, file, truth),
    codes: title.codes,
    ff: run.ff,
    threads: o.threads,
    width: o.width,
    height: o.height,
    seconds: SECONDS,
    leakDir: run.leakDir,
    viewers: viewers.map((v) => ({ payload: v.payload, mp4: v.mp4 })),
    R: run.R,
    log: run.log,
    elapsed: run.elapsed,
    readingSets,
    key: title.key,
    seed: o.seed,
    slots: title.layout.slots,
    nullTrials: o.nullTrials,
    want: (part) => run.want(part),
    keep: run.keep || o.reuse,
    reuse: o.reuse,
  });
}

/** Every part, in the order that keeps a seeded run's draws (payloads, F2's starts, the noise, the hard leaks') as they were. */
async function measure(ctx: SuiteContext, run: ForensicRun, title: Title, ingest: Ingests): Promise<ForensicResults> {
  const payloads = drawPayloads(run);
  const viewers = await makeViewers(run, title, payloads);
  const viewerTiming = await timeViewerPlaylist(run, title);
  const attacks = new AttackLeaks(run, title, viewers);
  await attacks.firstRound();
  const f2 = await shortLeaks(run, title, viewers);
  const f7 = await averagedPair(run, title, viewers);
  const nullReal = await nullCopies(run, title);
  const readingSets = [...nullReal, ...attacks.f1].map((x) => x.readings).filter((readings) => readings.length > 0);
  const unmarkedRms = readingRms(nullReal.map((x) => x.readings));
  const trials = nullScoreTrials(run, title, readingSets, unmarkedRms);
  const quality = await measureQuality(run, title, viewers[0]!);
  const f5 = await detectTime(run, viewers[0]!);
  // The stages of the first round's full-resolution detects, before the budget adds more.
  const stages = stageMedians(attacks.f1);
  await attacks.spendBudget();
  const f1 = attacks.sorted();
  const hard = await runHardLeaks(run, title, viewers, readingSets);
  return {
    o: run.o,
    want: run.want,
    machine: ctx.machine,
    clip: run.clip,
    clipBytes: statSync(run.clip.path).size,
    videoId: title.video.id,
    segments: title.segments,
    codebookS: title.codebookS,
    payloads,
    ingest,
    bytes: { sidecar: title.sidecarBytes, variants: title.variantBytes, working: title.workingBytes, plainWorking: title.plainWorkingBytes },
    viewers,
    viewerTiming,
    f1,
    attackWall: attacks.attackWall,
    skipped: attacks.skipped,
    f2,
    quality,
    f5,
    stageMedians: stages,
    nullReal,
    readingSetCount: readingSets.length,
    ...trials,
    unmarkedRms,
    f7,
    hardLeaks: hard,
    elapsed: run.elapsed(),
    suiteSeconds: (performance.now() - run.suiteT0) / 1000,
  };
}

export const suite: Suite = {
  name: 'forensic',
  description: 'A/B forensic watermark vs its targets F1-F8: attacks, short leaks, quality, cost, detect time, null trials, collusion',
  async run(ctx: SuiteContext) {
    const run = await startRun(
      ctx,
      forensicOptions(ctx.args.options, () => randomInt(1, 2 ** 31)),
    );
    const ingest = await ingestBoth(run);
    const title = await openTitle(run);
    try {
      const results = await measure(ctx, run, title, ingest);
      const figures = forensicFigures(results);
      process.stdout.write(`${forensicReport(results, figures).join('\n')}\n`);
      return forensicJson(results, figures, new Date().toISOString());
    } finally {
      title.engine.close();
      await rm(run.cwd, { recursive: true, force: true });
      if (!run.keep && !run.o.reuse) await rm(run.runDir, { recursive: true, force: true });
      else run.log(`kept working files in ${run.runDir}`);
    }
  },
};
