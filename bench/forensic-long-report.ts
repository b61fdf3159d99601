// The forensic-long bench's report: the title and its copies, the table of detect runs, alignment against originals of
// growing length, each target met or not, and the JSON written to bench/out/results-forensic-long.json. Pure: the
// suite measures (bench/forensic-long.ts and its parts).
import { LONG_LEAK_SECONDS, skipsLoopFilter } from '../src/engine/forensic/detect.js';
import type { ContentCheck, VsOriginal } from './forensic-long-align.js';
import { MB, type State } from './forensic-long-copies.js';
import type { DetectRun } from './forensic-long-detect.js';
import { type LongOptions, MEMORY_TARGET, WALL_TARGET_S } from './forensic-long-options.js';
import { fmt, formatMachine, type MachineInfo, table } from './lib/suite.js';

/** Everything a run measured. */
export interface LongResults {
  o: LongOptions;
  machine: MachineInfo;
  /** Which wmark ran: dist/ or src/ through tsx. */
  entry: string;
  title: { file: string; seconds: number; bytes: number; scenes: number; generatedS: number };
  content: ContentCheck;
  state: State;
  viewer: NonNullable<State['viewer']>;
  ingestReused: boolean;
  /** The title's code slots, working segment and variant bytes, its sidecar on disk and decoded. */
  ingest: { slots: number; workingBytes: number; variantBytes: number; sidecarBytes: number; decodedSidecarMB: number };
  viewerBytes: number;
  leak: { width: number; height: number; bytes: number; file: string };
  /** The 720p run (if any) first, then the scaling runs, the full leak among them. */
  runs: DetectRun[];
  hd: DetectRun | undefined;
  /** The shortest scaling leak, which alignment against the original's lengths uses. */
  small: { minutes: number; start: number };
  vsOriginal: VsOriginal[];
}

const mark = (ok: boolean) => (ok ? 'MET' : 'MISSED');
const align = (r: DetectRun) => r.timings['analyse.align'] ?? NaN;
const perMin = (r: DetectRun, s: number) => (s * 1000) / r.leakMinutes;

/** The targets' verdicts and the figures they rest on. */
export function longFigures(r: LongResults) {
  const { runs, hd, vsOriginal, o } = r;
  const full = runs.find((x) => x.file === r.leak.file)!;
  const first = runs.filter((x) => x !== hd)[0]!;
  const leakRatio = perMin(full, align(full)) / perMin(first, align(first));
  const [vo0, voN] = [vsOriginal[0], vsOriginal[vsOriginal.length - 1]];
  const origRatio = vo0 && voN ? voN.alignS / vo0.alignS : NaN;
  // A 720p leak of the full length: measured when the 720p leak is the full length, else the measured full run with
  // its decode replaced by the 720p decode rate (decoded as a full-length leak is only when it is as long as
  // LONG_LEAK_SECONDS: a shorter sample keeps deblocking, so its projection is on the high side).
  const hdFull = hd !== undefined && o.hdMinutes >= o.minutes;
  const decodePerMin = (x: DetectRun) => (x.timings.decode ?? NaN) / x.leakMinutes;
  const projectedHdWall = hd ? (hdFull ? hd.wallS : full.wallS + (decodePerMin(hd) - decodePerMin(full)) * full.leakMinutes) : NaN;
  return {
    full,
    first,
    vo0,
    voN,
    leakRatio,
    origRatio,
    origLogRatio: vo0 && voN ? Math.log(voN.bins) / Math.log(vo0.bins) : NaN,
    hdFull,
    projectedHdWall,
    hdMode: hd
      ? skipsLoopFilter(hd.leakMinutes * 60)
        ? 'decoded without deblocking, as a full-length leak is'
        : 'decoded with deblocking: shorter than a long leak, so on the high side'
      : '',
    trueAccused: full.accused.length === 1 && full.accused[0] === o.payload,
    memOk: Math.max(...runs.map((x) => x.peakTreeMB)) * MB <= MEMORY_TARGET,
    wallOk: full.wallS <= WALL_TARGET_S,
    hdOk: projectedHdWall <= WALL_TARGET_S,
    leakLinear: leakRatio <= 1.5,
    origOk: origRatio <= 2,
  };
}
type Figures = ReturnType<typeof longFigures>;

/** The title, its content check, its ingest, the viewer and the leak. */
function header(r: LongResults): string[] {
  const { o, title, content: c, state, ingest, viewer } = r;
  return [
    `== forensic-long (F11): a ${o.minutes}-min forensic title, wmark detect on a full-length leak ==`,
    formatMachine(r.machine),
    `wmark:   ${r.entry}`,
    '',
    `title    ${(title.seconds / 60).toFixed(1)} min, ${o.width}x${o.height} ${o.fps} fps, GENERATED SMALL (stands in for a 720p title; detection works on 128x72 grey`,
    `         whatever the size, so only the leak's decode depends on it: a 720p leak is measured below); ${title.scenes} scenes of ${o.sceneMinutes} min,`,
    `         each its own random texture, shots of 3-8 s panning over it; ${(title.bytes / MB).toFixed(0)} MB${title.generatedS ? `, generated in ${title.generatedS.toFixed(0)} s` : ' (cached)'}`,
    `content  ${((100 * c.informative) / c.bins).toFixed(1)}% of the ${c.bins} 10-Hz bins carry a fingerprint; ${c.distinct} distinct of 65,536, largest bucket ${c.bucketSizes[0] ?? 0}` +
      ` (lookups skip buckets over ${c.skipAbove}: ${c.bucketSizes.filter((b) => b > c.skipAbove).length} skipped);`,
    `         self-check: ${c.selfOk}/${c.selfChecks} ${c.selfSeconds}-s stretches of the title's own signature align back to their place (${c.selfOk === c.selfChecks ? 'no repeats' : 'SOME REPEAT OR FAIL'})`,
    `ingest   wmark ingest --forensic: ${fmt(state.ingest.wallS, 0)} s wall, ${fmt(state.ingest.cpuS, 0)} s cpu, peak RSS ${fmt(state.ingest.peakTreeMB, 0)} MB (tree) / ${fmt(state.ingest.peakProcessMB, 0)} MB (largest)` +
      `${r.ingestReused ? ` [measured ${state.ingest.at}, reused]` : ''}`,
    `         ${state.segments} segments, ${ingest.slots} code slots; working segments ${(ingest.workingBytes / MB).toFixed(0)} MB, variants ${(ingest.variantBytes / MB).toFixed(0)} MB,` +
      ` sidecar ${(ingest.sidecarBytes / MB).toFixed(1)} MB on disk (${ingest.decodedSidecarMB.toFixed(0)} MB decoded in memory)`,
    `viewer   wmark watermark --forensic ${o.payload} --containers mp4: ${fmt(viewer.wallS, 1)} s wall, ${fmt(viewer.cpuS, 1)} s cpu, peak RSS ${fmt(viewer.peakTreeMB, 0)} MB; copy ${(r.viewerBytes / MB).toFixed(0)} MB`,
    `leak     the viewer's copy at ${r.leak.width}x${r.leak.height}, CRF ${o.leakCrf} (x264 veryfast): ${(r.leak.bytes / MB).toFixed(0)} MB; excerpts cut from it by stream copy`,
    '',
  ];
}

/** One row a detect run: its times, memory, the CLI's step timings, alignment's work and the verdict. */
function detectTable(runs: DetectRun[], full: DetectRun): string[] {
  const header = ['leak', 'min', 'wall s', 'cpu s', 'tree MB', 'proc MB', 'decode s', 'align s', 'reg s', 'read s', 'score s'];
  const rows = runs.map((r) => [
    ...[r.name, r.leakMinutes, r.wallS, r.cpuS, r.peakTreeMB, r.peakProcessMB, r.timings.decode ?? NaN, align(r)],
    ...[r.timings['analyse.register'] ?? NaN, r.timings['analyse.read'] ?? NaN, r.timings['analyse.score'] ?? NaN, perMin(r, align(r))],
    (r.alignStats?.votes ?? NaN) / r.leakMinutes,
    r.alignStats ? `${r.alignStats.windowsAligned}/${r.alignStats.windows}` : '-',
    r.pieces.length,
    `${r.segmentsRead}/${r.slotsTotal}`,
    r.trueZ,
    r.accused.length ? r.accused.join(',') : 'none',
  ]);
  const undeblocked = runs.filter((r) => skipsLoopFilter(r.leakMinutes * 60)).map((r) => r.name);
  return [
    "-- wmark detect --json (real CLI, one run each; GNU time + the process tree's RSS sampled every 100 ms) --",
    table([...header, 'align ms/min', 'votes/min', 'windows ok', 'pieces', 'slots', 'true z', 'accused'], rows, [
      undefined,
      1,
      1,
      1,
      0,
      0,
      1,
      2,
      2,
      2,
      2,
      1,
      0,
      undefined,
      0,
      undefined,
      2,
    ]),
    `(tree MB: wmark + ffmpeg + any helper summed; proc MB: the largest single process. Peak of the full run: ${full.peakTop}.`,
    ` Leaks of ${LONG_LEAK_SECONDS / 60} min or more are decoded without deblocking: ${undeblocked.join(', ') || 'none here'}.)`,
    '',
  ];
}

function alignmentTable(r: LongResults): string[] {
  const { small } = r;
  return [
    `-- alignment vs original length (in process: alignPieces on the ${small.minutes}-min leak, which sits at ${(small.start / 60).toFixed(0)} min; best of 3) --`,
    table(
      ['original min', 'bins', 'align s', 'ms per leak-min', 'votes', 'windows aligned', 'pieces', 'offset s'],
      r.vsOriginal.map((v) => [v.originalMin, v.bins, v.alignS, (v.alignS * 1000) / small.minutes, v.votes, `${v.aligned}/${v.windows}`, v.pieces, v.offset]),
      [0, 0, 3, 1, 0, undefined, 0, 1],
    ),
    '',
  ];
}

/** The 720p row: measured on a full-length 720p leak, or projected from the 720p decode rate. */
function hdRow(hd: DetectRun, f: Figures): string[] {
  const decodePerMin = (x: DetectRun) => fmt((x.timings.decode ?? NaN) / x.leakMinutes, 2);
  return f.hdFull
    ? [
        'detect <= 5 min on a full-length 1280x720 leak',
        mark(f.hdOk),
        `${fmt(hd.wallS, 1)} s wall, ${fmt(hd.cpuS, 1)} s cpu, peak ${fmt(hd.peakTreeMB, 0)} MB tree; z ${fmt(hd.trueZ)}`,
      ]
    : [
        'detect <= 5 min, projected for a full 720p leak',
        mark(f.hdOk),
        `${fmt(f.projectedHdWall, 0)} s: 720p decode ${decodePerMin(hd)} s/min (${f.hdMode}) vs ${decodePerMin(f.full)} s/min here`,
      ];
}

function targets(r: LongResults, f: Figures): string[] {
  const { full, first, vo0, voN } = f;
  const rows = [
    [
      'peak memory <= 1 GB (every run, whole tree)',
      mark(f.memOk),
      `${fmt(full.peakTreeMB, 0)} MB tree, ${fmt(full.peakProcessMB, 0)} MB largest process; max over all runs ${fmt(Math.max(...r.runs.map((x) => x.peakTreeMB)), 0)} MB`,
    ],
    [
      'detect <= 5 min on 2 cores (full leak, as generated)',
      mark(f.wallOk),
      `${fmt(full.wallS, 1)} s wall, ${fmt(full.cpuS, 1)} s cpu (${fmt(full.cpuS / full.wallS, 2)} cores)`,
    ],
    ...(r.hd ? [hdRow(r.hd, f)] : []),
    [
      'alignment linear in the leak (ms/min, longest / shortest <= 1.5)',
      mark(f.leakLinear),
      `${fmt(perMin(full, align(full)), 1)} / ${fmt(perMin(first, align(first)), 1)} ms per leak-minute = ${fmt(f.leakRatio, 2)}`,
    ],
    [
      'alignment ~log in the original (longest / shortest original <= 2)',
      mark(f.origOk),
      `${fmt(f.origRatio, 2)} for ${vo0?.originalMin}->${voN?.originalMin} min (log ratio ${fmt(f.origLogRatio, 2)}, linear would be ${fmt((voN?.bins ?? NaN) / (vo0?.bins ?? NaN), 1)})`,
    ],
    [
      'the true viewer accused on the full leak',
      mark(f.trueAccused),
      `accused [${full.accused.join(', ')}], z ${fmt(full.trueZ)}, ${full.segmentsRead}/${full.slotsTotal} slots read`,
    ],
  ];
  return ['-- targets --', table(['target', 'result', 'measured'], rows)];
}

export function longReport(r: LongResults, f: Figures = longFigures(r)): string[] {
  return [...header(r), ...detectTable(r.runs, f.full), ...alignmentTable(r), ...targets(r, f)];
}

/** The JSON result: the options, the title and its copies, every run, and the targets. */
export function longJson(r: LongResults, f: Figures = longFigures(r)) {
  const { o, content: c } = r;
  return {
    options: {
      hours: o.hours,
      width: o.width,
      height: o.height,
      fps: o.fps,
      sceneMinutes: o.sceneMinutes,
      leakScale: o.leakScale,
      leakCrf: o.leakCrf,
      scaling: o.scaling,
      hdMinutes: o.hdMinutes,
      payload: o.payload,
    },
    machine: r.machine,
    entry: r.entry,
    title: r.title,
    content: {
      bins: c.bins,
      informative: c.informative,
      distinct: c.distinct,
      largestBucket: c.bucketSizes[0] ?? 0,
      skipAbove: c.skipAbove,
      selfOk: c.selfOk,
      selfChecks: c.selfChecks,
    },
    ingest: { ...r.state.ingest, reused: r.ingestReused, segments: r.state.segments, ...r.ingest },
    viewer: { ...r.viewer, bytes: r.viewerBytes },
    runs: r.runs,
    vsOriginal: r.vsOriginal,
    targets: {
      memOk: f.memOk,
      wallOk: f.wallOk,
      projectedHdWall: f.projectedHdWall,
      hdOk: f.hdOk,
      leakRatio: f.leakRatio,
      leakLinear: f.leakLinear,
      origRatio: f.origRatio,
      origOk: f.origOk,
      trueAccused: f.trueAccused,
    },
  };
}
