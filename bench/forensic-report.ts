// The forensic bench's report: a section per part that ran (F1-F8, then the hard leaks'), and the summary of targets.
// Pure: the figures come from bench/forensic-figures.ts.
import path from 'node:path';
import { MARK_AMPLITUDE } from '../src/core/forensic/pattern-image.js';
import { Z_THRESHOLD } from '../src/core/forensic/score.js';
import { ATTACKS } from './forensic-attacks.js';
import { type ForensicFigures, type ForensicResults, forensicFigures } from './forensic-figures.js';
import { ENGINE_ENCODE, FPS, SECONDS, TARGETS } from './forensic-options.js';
import { PARTS, type Part } from './lib/forensic-parts.js';
import { median } from './lib/measure.js';
import { fmt, formatMachine, table } from './lib/suite.js';

const verdictOk = (ok: boolean) => (ok ? 'MET' : 'MISSED');
const mbps = (bytes: number, seconds: number) => (bytes * 8) / seconds / 1e6;
type R = ForensicResults;
type F = ForensicFigures;

function header(r: R): string[] {
  const { o, clip, want, skipped } = r;
  const fullAttacks = !want('f1')
    ? 'not run'
    : o.fullAttacks === 'all'
      ? 'every payload'
      : o.fullAttacks === 'rotate'
        ? 'one payload each, in turn'
        : `one payload each, then the rest within a ${o.budgetMin}-min budget${skipped.length ? ` (${skipped.length} cells not run for time)` : ' (all run)'}`;
  return [
    '',
    `== bench forensic: A/B forensic watermark, ${SECONDS} s ${o.width}x${o.height} ${FPS} fps natural clip with audio ==`,
    formatMachine(r.machine),
    `source:  ${path.relative(process.cwd(), clip.path)} (${(r.clipBytes / 1e6).toFixed(0)} MB, ${mbps(r.clipBytes, SECONDS).toFixed(1)} Mbit/s)${clip.generatedSeconds ? `, generated in ${clip.generatedSeconds.toFixed(0)} s (one-time)` : ', cached'}`,
    `video:   ${r.videoId}, ${r.segments} segments; mark amplitude ${MARK_AMPLITUDE} levels; variants libx264 ${ENGINE_ENCODE.preset} CRF ${ENGINE_ENCODE.crf}; z threshold ${Z_THRESHOLD}`,
    `payloads (seed ${o.seed}): ${r.payloads.join(', ')}; attacks: plain ffmpeg -an, libx264 veryfast, -threads ${o.threads}; full-resolution attacks: ${fullAttacks}`,
    `detection of attacked leaks: detectLeak in-process (the code wmark detect runs); rank = true payload's place among all 65,536 scores`,
    ...(o.only ? [`parts run (--only): ${PARTS.filter((p) => o.only!.has(p)).join(', ')}; the rest were skipped`] : []),
    '',
  ];
}

function f1Section(r: R, f: F): string[] {
  const { f1, payloads, segments } = r;
  const attackLabel = (id: string) => ATTACKS.find((a) => a.id === id)?.label ?? id;
  const rows = f1.map((o) => [
    attackLabel(o.attack),
    String(o.truth[0]),
    `${fmt(mbps(o.bytes, o.leakSeconds), 2)} Mb/s`,
    String(o.segmentsRead),
    String(o.bitErrors[0]),
    o.softMean[0]!,
    o.trueZ[0]!,
    String(o.trueRank[0]),
    o.best === o.truth[0] ? '=' : String(o.best),
    o.gap,
    o.found ? (o.verdict === 'correct' ? 'correct' : 'INCORRECT') : 'not found',
  ]);
  const matrix = ATTACKS.map((a) => [
    a.label,
    ...payloads.map((u) => {
      const o = f1.find((x) => x.attack === a.id && x.truth[0] === u);
      return o ? `${fmt(o.trueZ[0]!, 1)} r${o.trueRank[0]} ${o.verdict === 'correct' ? 'ok' : o.verdict.toUpperCase()}` : '-';
    }),
  ]);
  return [
    '-- F1: attack x payload (full 5-min leaks) --',
    table(['attack', 'payload', 'leak', 'segs read', 'bit errors', 'soft mark', 'z (true)', 'rank', 'best', 'gap', 'verdict'], rows),
    `(soft mark = mean of reading x codeword bit, 1.0 = the full mark; z tops out near sqrt(segments read) = ${fmt(Math.sqrt(segments))} for a full leak: it counts agreeing bits, not their strength)`,
    '',
    table(['attack \\ payload', ...payloads.map(String)], matrix),
    `F1 ${verdictOk(f.f1Ok)}: ${f1.filter((o) => o.verdict === 'correct').length}/${f1.length} leaks name the right viewer (rank 1, z >= ${Z_THRESHOLD}); min z ${fmt(Math.min(...f1.map((o) => o.trueZ[0]!)))}; wrong accusations ${f1.filter((o) => o.verdict === 'wrong').length}`,
    '',
  ];
}

function f2Section(r: R, f: F): string[] {
  const minSegments = Math.ceil(Z_THRESHOLD ** 2);
  return [
    '-- F2: shortest contiguous leak identified (CRF 30 + 0.5x, random start) --',
    table(
      ['leak min', 'start s', 'segs read', 'z ceiling', 'bit errors', 'soft mark', 'z (true)', 'rank', 'verdict'],
      r.f2.map((o) => [
        o.minutes,
        o.startS,
        String(o.segmentsRead),
        Math.sqrt(o.segmentsRead),
        String(o.bitErrors[0]),
        o.softMean[0]!,
        o.trueZ[0]!,
        String(o.trueRank[0]),
        o.verdict,
      ]) as (string | number)[][],
    ),
    `(z ceiling ~ sqrt(segments read): ${Z_THRESHOLD} needs at least ${minSegments} segments read, i.e. ${fmt((minSegments * 4) / 60, 1)} min of 4-s segments plus the partial ones at the ends)`,
    `F2 ${verdictOk(f.f2Ok)}: shortest identified ${f.f2Shortest !== undefined ? `${f.f2Shortest} min` : 'none'} (target <= ${TARGETS.f2Minutes} min)`,
    '',
  ];
}

function f3Tables(r: R): string[] {
  const { rows, edges, code0 } = r.quality;
  const segmentHeader = ['segment', 'mark PSNR-Y', '(computed)', 'A bytes', 'B bytes', 'clean bytes', 'A/clean', 'B/clean'];
  const edgeHeader = ['edge', 'viewer |dY| at edge', 'clean |dY| at edge', 'ratio', 'viewer |dY| inside', 'cell step mean', 'cell step max'];
  return [
    table(
      [...segmentHeader, 'PSNR A vs clean', 'A vs working', 'clean vs working'],
      rows.map((x) => [
        String(x.k),
        x.markPsnrY,
        x.markPsnrCalc,
        String(x.aBytes),
        String(x.bBytes),
        String(x.cleanBytes),
        `${fmt((x.aBytes / x.cleanBytes - 1) * 100)} %`,
        `${fmt((x.bBytes / x.cleanBytes - 1) * 100)} %`,
        x.aVsClean,
        x.aVsWorking,
        x.cleanVsWorking,
      ]),
    ),
    table(
      [...edgeHeader, 'by design mean', 'by design max'],
      edges.map((e) => [
        `${e.k}->${e.k + 1} ${code0[e.k]! > 0 ? 'A' : 'B'}${code0[e.k + 1]! > 0 ? 'A' : 'B'}`,
        e.viewerEdge,
        e.cleanEdge,
        e.viewerEdge / e.cleanEdge,
        e.viewerInside,
        e.step.meanAbs,
        e.step.maxAbs,
        e.designStep.meanAbs,
        e.designStep.maxAbs,
      ]),
    ),
  ];
}

function f3Section(r: R, f: F): string[] {
  const q = f.quality;
  const { rows, edges, baselineIdentical } = r.quality;
  return [
    `-- F3: mark quality and bitrate (${rows.length} sampled segments; viewer ${r.payloads[0]} for the edges) --`,
    ...f3Tables(r),
    `mark PSNR-Y (the mark alone, pre-encode) ${fmt(q.markPsnr)} dB (computed from the pattern frames ${fmt(q.markPsnrCalc)} dB; without the dither ${fmt(q.markPsnrNoDither)} dB; target >= ${TARGETS.f3PsnrDb})`,
    `delivered PSNR-Y vs the clean working copy (CRF 18): variant A ${fmt(median(rows.map((x) => x.aVsWorking)))} dB, clean re-encode at the same settings ${fmt(median(rows.map((x) => x.cleanVsWorking)))} dB; variant A vs that clean re-encode ${fmt(median(rows.map((x) => x.aVsClean)))} dB (medians)`,
    `bitrate overhead vs the clean re-encode (video bytes): A ${fmt(q.overheadA * 100)} %, B ${fmt(q.overheadB * 100)} %, A+B ${fmt(q.overheadAB * 100)} % (target <= ${TARGETS.f3Overhead * 100} %)`,
    `  (clean re-encode = the working segment through the same x264 settings; the variant pipeline with an all-grey pattern gives a bit-identical stream: ${baselineIdentical === null ? 'not checked' : baselineIdentical ? 'yes' : 'NO'})`,
    `segment edges: viewer/clean |dY| at the edge ${fmt(q.edgeRatio, 3)} (median; limit 1.10), i.e. +${fmt(q.edgeExtra, 3)} levels on ${fmt(median(edges.map((e) => e.cleanEdge)))} (keyframe + motion), vs ${fmt(median(edges.map((e) => e.viewerInside)))} between ordinary consecutive frames`,
    `  low-frequency step per pattern cell (viewer minus clean change): mean ${fmt(q.stepMean)}, max ${fmt(q.stepMax)} levels; by design (a x pattern change) mean ${fmt(q.designMean)}, max ${fmt(q.designMax)}`,
    `F3 ${verdictOk(f.f3Ok)}: PSNR ${verdictOk(q.markPsnr >= TARGETS.f3PsnrDb)}, overhead ${verdictOk(q.overheadAB <= TARGETS.f3Overhead)}, edges ${q.stepOk ? 'no visible step' : 'STEP'}`,
    '',
  ];
}

function f4Section(r: R, f: F): string[] {
  const { viewers, segments } = r;
  const { playlistUs, playlistWithCodewordUs, playlistBytes } = r.viewerTiming;
  return [
    '-- F4: cost of a new forensic viewer --',
    table(
      ['payload', 'watermark (m3u8) s', 'cpu s', '+mp4 join s', 'mp4 MB', 'segments linked', 'playlist bytes'],
      viewers.map((v) => [
        String(v.payload),
        v.m3u8.wallS,
        v.m3u8.cpuS,
        v.mp4Join.wallS,
        v.mp4Bytes / 1e6,
        `${v.linkedSegments}/${segments}`,
        String(v.playlistBytes),
      ]),
    ),
    `playlist generation in a child process (writeMediaPlaylist, ${segments} segments): ${fmt(playlistUs, 1)} us, ${playlistBytes} bytes; with the viewer's codeword computed and mapped: ${fmt(playlistWithCodewordUs, 1)} us`,
    `F4 ${verdictOk(f.f4Ok)}: no encode (every segment a hard link to a variant file: ${viewers.every((v) => v.linkedSegments === segments) ? 'yes' : 'NO'}), ${fmt(playlistUs, 1)} us <= ${TARGETS.f4Us} us, ${playlistBytes} B <= ${TARGETS.f4Bytes} B; the CLI call itself costs ${fmt(median(viewers.map((v) => v.m3u8.wallS)))} s (process start, database)`,
    '',
  ];
}

function f5Section(r: R, f: F): string[] {
  const { f5, o } = r;
  const downscaled = r.f1.filter((x) => ATTACKS.find((a) => a.id === x.attack)!.downscaled);
  const stages = Object.entries(r.stageMedians)
    .map(([s, v]) => `${s} ${fmt(v)}`)
    .join(', ');
  return [
    '-- F5: wmark detect, end to end --',
    `leak: viewer ${r.payloads[0]}'s full copy (${(f5.bytes / 1e6).toFixed(0)} MB, ${mbps(f5.bytes, f5.seconds).toFixed(1)} Mbit/s, ${o.width}x${o.height}, ${fmt(f5.seconds, 1)} s)`,
    `wall ${fmt(f5.wallS)} s, cpu ${fmt(f5.cpuS)} s (engine's own elapsed ${fmt(f5.engineElapsedS)} s; other load ${fmt(f5.otherCores)} cores); correct: ${f5.correct}, z ${fmt(f5.z)}`,
    `in-process stages on the full-resolution attacked leaks (median s): ${stages}; downscaled leaks: median ${fmt(median(downscaled.map((x) => x.detectS)))} s`,
    `F5 ${verdictOk(f.f5Ok)}: ${fmt(f5.wallS)} s (target <= ${TARGETS.f5Seconds} s)`,
    '',
  ];
}

function f6Section(r: R, f: F): string[] {
  const { nullReal, codebookTrials: cb, noiseTrials: noise } = r;
  const trialRow = (kind: string, s: typeof cb) => [
    kind,
    String(s.trials),
    String(s.accusations),
    String(s.collusionFlags),
    s.maxZ,
    String(s.over5),
    s.seconds,
  ];
  return [
    '-- F6: false accusations --',
    table(
      ['null copy (real detect)', 'segs read', 'align corr', 'best z', 'verdict'],
      nullReal.map((o) => [o.name, String(o.segmentsRead), o.alignment.score, o.bestZ, o.verdict]),
    ),
    table(
      ['trial kind', 'trials', 'accusations', 'collusion flags', 'max best z', 'best z >= 5', 's'],
      [
        [
          'real detects (above)',
          String(nullReal.length),
          String(f.realNullAccusations),
          String(nullReal.filter((o) => o.collusion).length),
          Math.max(...nullReal.map((o) => o.bestZ)),
          String(nullReal.filter((o) => o.bestZ >= 5).length),
          '-',
        ],
        trialRow(`readings of ${r.readingSetCount} copies x ${r.o.nullCodebooks} other titles' codebooks`, cb),
        trialRow('noise readings vs this title', noise),
      ],
    ),
    `F6 ${verdictOk(f.f6Ok)}: ${f.f6Accusations} accusations in ${f.f6Trials} null trials (target 0 of ${TARGETS.f6Trials})`,
    '',
  ];
}

function f7Section(r: R, f: F): string[] {
  const { f7, o } = r;
  const { u1, u2 } = f;
  return [
    '-- F7: two viewers averaged --',
    `copies of ${u1} and ${u2} averaged (blend=all_mode=average), re-encoded ${o.collusionScale === 1 ? 'at full size' : `at ${o.collusionScale}x`}, CRF 23: ${f7?.segmentsRead} segments read`,
    `accused ${f7?.accused.join(', ') || 'nobody'}; collusion flagged: ${f7?.collusion}; z of ${u1} ${fmt(f7?.trueZ[0] ?? NaN)} (rank ${f7?.trueRank[0]}), of ${u2} ${fmt(f7?.trueZ[1] ?? NaN)} (rank ${f7?.trueRank[1]})`,
    `F7 ${verdictOk(f.f7Ok)}`,
    '',
  ];
}

function f8Section(r: R, f: F): string[] {
  const { ingest, bytes } = r;
  return [
    '-- F8: ingest cost --',
    table(
      ['ingest', 'wall s', 'cpu s', 'segment bytes (MB)', 'other load (cores)'],
      [
        ['plain', ingest.plain?.wallS ?? NaN, ingest.plain?.cpuS ?? NaN, bytes.plainWorking / 1e6, ingest.plain?.otherCores ?? NaN],
        [
          `--forensic (${r.o.layoutChoice})`,
          ingest.forensic.wallS,
          ingest.forensic.cpuS,
          (bytes.working + bytes.variants) / 1e6,
          ingest.forensic.otherCores ?? NaN,
        ],
      ],
    ),
    `ratio forensic/plain: wall ${fmt(f.f8Ratio)}, cpu ${fmt(f.f8CpuRatio)} (target about ${TARGETS.f8Ratio}: met up to ${fmt(TARGETS.f8Ratio * 1.25)}); sidecar ${(bytes.sidecar / 1e6).toFixed(2)} MB (target <= 5 MB); variants A+B ${(bytes.variants / 1e6).toFixed(0)} MB on disk${ingest.reused ? ' [ingests reused from an earlier run]' : ''}`,
    `F8 ${verdictOk(f.f8Ok)}`,
    '',
  ];
}

function summary(r: R, f: F): string[] {
  const part = <T>(p: Part, items: T[]): T[] => (r.want(p) ? items : []);
  const { f1, f7 } = r;
  const q = f.quality;
  return [
    `-- summary (forensic layout: ${r.o.layoutChoice}) --`,
    table(
      ['target', 'result', 'measured'],
      [
        ...part('f1', [
          [
            'F1 attacks',
            verdictOk(f.f1Ok),
            `${f1.filter((o) => o.verdict === 'correct').length}/${f1.length} correct, min z ${fmt(Math.min(...f1.map((o) => o.trueZ[0]!)))}`,
          ],
        ]),
        ...part('f2', [['F2 short leak', verdictOk(f.f2Ok), `shortest identified ${f.f2Shortest ?? 'none'} min`]]),
        ...part('f3', [
          ['F3 quality', verdictOk(f.f3Ok), `mark ${fmt(q.markPsnr)} dB, overhead ${fmt(q.overheadAB * 100)} %, edges ${q.stepOk ? 'ok' : 'step'}`],
        ]),
        ...part('f4', [['F4 new viewer', verdictOk(f.f4Ok), `${fmt(r.viewerTiming.playlistUs, 1)} us, ${r.viewerTiming.playlistBytes} B, no encode`]]),
        ...part('f5', [['F5 detect time', verdictOk(f.f5Ok), `${fmt(r.f5.wallS)} s`]]),
        ...part('f6', [['F6 false accusations', verdictOk(f.f6Ok), `${f.f6Accusations}/${f.f6Trials}`]]),
        ...part('f7', [['F7 collusion', verdictOk(f.f7Ok), `accused ${f7?.accused.join(', ') || 'nobody'}, flagged ${f7?.collusion}`]]),
        ...part('f8', [['F8 ingest', verdictOk(f.f8Ok), `x${fmt(f.f8Ratio)} wall, sidecar ${(r.bytes.sidecar / 1e6).toFixed(2)} MB`]]),
        ...r.hardLeaks.summary,
      ],
    ),
    `bench self-check: the bench's scoring of detectLeak's readings disagreed with detectLeak ${f.inconsistent} time(s); suite time ${r.elapsed}`,
    '',
  ];
}

/** The report's lines: each part's section only for a part that ran. */
export function forensicReport(r: R, f: F = forensicFigures(r)): string[] {
  const sections: [Part, (r: R, f: F) => string[]][] = [
    ['f1', f1Section],
    ['f2', f2Section],
    ['f3', f3Section],
    ['f4', f4Section],
    ['f5', f5Section],
    ['f6', f6Section],
    ['f7', f7Section],
    ['f8', f8Section],
  ];
  return [...header(r), ...sections.flatMap(([p, section]) => (r.want(p) ? section(r, f) : [])), ...r.hardLeaks.lines, '', ...summary(r, f)];
}
