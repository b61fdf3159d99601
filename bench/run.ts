// `npm run bench [-- SUITE...] [--rounds N] [--keep] [--name value ...]`: runs the named suites (default: all), prints
// each suite's report on stdout and writes bench/out/results-<suite>.json. Progress goes to stderr.
//
// A suite is a module under bench/ exporting `suite: Suite` (see bench/lib/suite.ts); add it to SUITES below.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type BenchArgs, benchTools, machineInfo, OUT_DIR, type Suite } from './lib/suite.js';

const SUITES: Record<string, () => Promise<Suite>> = {
  text: async () => (await import('./text.js')).suite,
  serve: async () => (await import('./serve.js')).suite,
  forensic: async () => (await import('./forensic.js')).suite,
  'forensic-long': async () => (await import('./forensic-long.js')).suite,
  pay: async () => (await import('./pay.js')).suite,
  cluster: async () => (await import('./cluster.js')).suite,
  'control-plane': async () => (await import('./control-plane.js')).suite,
  'forensic-bframe': async () => (await import('./forensic-bframe.js')).suite,
  start: async () => (await import('./start.js')).suite,
  band: async () => (await import('./band.js')).suite,
  'band-ingest': async () => (await import('./band-ingest.js')).suite,
};

const USAGE = `usage: npm run bench -- [suite ...] [--rounds N] [--keep] [--<option> value ...]
suites: ${Object.keys(SUITES).join(', ')} (default: all)
  --rounds N          rounds per suite, alternating the compared jobs (default 3); the median is reported
  --keep              keep working folders under bench/out/ (outputs, data dirs)
text suite options:
  --seconds S         length of the generated clip (default 60; other lengths are cached separately)
  --containers LIST   pass --containers to wmark watermark (default: wmark's default, m3u8,mp4)
  --quiet-wait S      before each timed job, wait up to S seconds for other processes to go quiet (default 120; 0: off)
pay suite options (what a viewer costs: lead latency, on-demand renders, seeks, shared decodes; also the text and serve suites' options, for parts 5 and 6):
  --only LIST         parts to run: lead,ondemand,seek,batch,full,serving,forensic (default: all)
  --trials N          lead latency trials per way (default 2 x rounds + 1)
  --rate R            playback rate of the on-demand viewer (default 4)     --watch S      seconds it watches (default 60)
  --long-minutes M    length of the on-demand/seek title (default 10)       --seek-to S    seek target (default 480)
  --seek-timeout S    give up on the seek after S seconds (default 30)      --idle-max S   wait for serve to go idle (default 300)
  --viewers N         batch size (default 8)   --batch-rounds N (default 1)   --batch-concurrency N (default: the CLI's)
  --quiet-wait S      as above, default 10 for this suite
forensic suite options (all listed at the top of bench/forensic.ts):
  --height H          clip height (default 720)     --budget-min M   time budget for full-resolution attacks (default 45)
  --only LIST         parts to run: f1..f8, f2b, f9, f9s, f10, f7b, f6b (default: all but f9s, the F9 step-by-step table)
cluster suite options (embedded vs serve --queue + wmark workers, Redis and the store on loopback):
  --store s3|folder   the farm's media store: s3rver behind a byte-counting proxy (default s3; falls back to folder, saying
                      so, when this build's serve cannot use --media s3://) or serve's media folder shared with the workers
  --workers N         (a)'s encoder threads and (b)'s workers, one task and one thread each: one machine (default 2)
  --seconds S         length of the 720p clip (default 60)      --quiet-wait S   as above, default 10
  --job-timeout S     give up on a job after S seconds (default 900)
  --redis-ops N       projection: one Redis' capacity in ops/s (default 100000)
  --egress-mbit M     projection: serve's NIC in Mbit/s (default 1000)   --store-mbit M   the store's, Mbit/s (default 1000)
forensic-bframe suite options (whether a forensic code can ride on non-reference B-frames alone):
  --heights LIST      clip heights, 16:9 (default 180,720)      --kinds LIST   natural,scene (default both)
  --seconds S         clip length, whole 4-s GOPs (default 12)  --crf N        x264 CRF (default 23, the engine's)
band suite options (band rendering against full renders; needs the patched x264, scripts/build-x264.sh):
  --only LIST         parts: figures (the encodes and the splice, driven directly), capacity (through wmark serve)
  --heights LIST      picture heights, 16:9 (default 720,1080)   --seconds S    clip length, whole 2-s segments (default 8)
  --viewers N         viewers, and full jobs, per height (default 8)  --band-px P  the band's height (default 80)
  --threads N         x264/ffmpeg threads of both renders (default 2)
  capacity: new real-time viewers one serve carries without a stall, band against WMARK_BAND=off:
  --capacity-heights LIST  (default 720)        --capacity-seconds S  title length (default 48)
  --capacity-ladder LIST   viewer counts tried, stopping after the first with a stall (default 2,4,6,8,12,15,18,24,30)
  --capacity-spacing S     seconds between arrivals (default 0.75)    --capacity-rounds N  (default 2)
  --capacity-startup S     playback starts S after the first segment (default: the first segment's duration)
  --quiet-wait S           before each trial, wait up to S s for a quiet machine (default 10)  --idle-max S (default 300)
band-ingest suite options (why a band title's ingest costs ~2x today's, options A/B/C; needs the patched x264):
  --clips LIST        natural,motion,talking (default all)   --seconds S    clip length (default 12)   --height H (default 720)
control-plane suite options (1-3 serve instances on PostgreSQL behind HAProxy vs one SQLite serve; one run, --rounds 1 is enough):
  --concurrency N     requests in flight during a throughput run (default 16)
  --seconds S         seconds per throughput run, after a 1-s warm-up (default 4)
  --samples N         sequential requests per latency figure (default 200)
start suite options (the CLI's start, whole process; cold --no-wait to playable is pay's 1b: pay --only lead):
  --runs N            turns of node -e 0, --version and --help, A B A B (default 15)
  --against DIR       also run DIR/bin/wmark.js (another checkout, built) in the same turns; reports the ratios pair by pair
  --no-wait-pairs N   also N cold \`wmark watermark --no-wait\` runs to a playable playlist per checkout, A B A B, on a
                      small generated clip (default 0: pay's 1b is the figure on its 720p clip)
forensic-long suite options (F11: a feature-length forensic title, generated small and cached under bench/out/forensic-long):
  --hours H           title length (default 2)                  --height H     title height, 16:9 (default 180: generated small)
  --fps F             title frame rate (default 30)             --scene-min M  minutes per generated scene (default 5)
  --leak-scale F      full-length leak size vs the title (default 0.5)        --leak-crf N   its CRF (default 28)
  --scaling LIST      leak lengths in minutes detected to show alignment's scaling (default 10,30,120)
  --hd-minutes M      minutes of a 1280x720 leak detected for the 720p decode rate (default 20; the title's length: all of it; 0: skip)
  --payload U         the viewer's payload (default 20011)      --quiet-wait S before each timed detect (default 10)
  --reingest          ingest, watermark and cut the leaks again (default: reuse the cached ones)`;

export function parseArgs(argv: string[]): BenchArgs {
  const out: BenchArgs = { suites: [], rounds: 3, keep: false, options: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--help' || a === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else if (a === '--keep') out.keep = true;
    else if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = eq > 0 ? a.slice(2, eq) : a.slice(2);
      const next = argv[i + 1];
      let value: string | true = true;
      if (eq > 0) value = a.slice(eq + 1);
      else if (next !== undefined && !next.startsWith('--')) {
        value = next;
        i++;
      }
      if (name === 'rounds') {
        const n = Number(value);
        if (!Number.isInteger(n) || n < 1) throw new Error(`--rounds: expected a positive integer, got ${String(value)}`);
        out.rounds = n;
      } else out.options[name] = value;
    } else out.suites.push(a);
  }
  return out;
}

async function main(): Promise<number> {
  let args: BenchArgs;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const unknown = args.suites.filter((s) => !(s in SUITES));
  if (unknown.length) {
    process.stderr.write(`unknown suite: ${unknown.join(', ')}\n${USAGE}\n`);
    return 2;
  }
  const names = args.suites.length ? args.suites : Object.keys(SUITES);
  const env = { ...process.env };
  const tools = benchTools(env);
  if (tools.ffmpeg.source === 'missing') {
    process.stderr.write('ffmpeg not found (bundled @ffmpeg-installer package, WMARK_FFMPEG or PATH)\n');
    return 3;
  }
  const machine = machineInfo(tools);
  const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
  await mkdir(OUT_DIR, { recursive: true });
  let failed = 0;
  for (const name of names) {
    const suite = await SUITES[name]!();
    log(`suite ${name}: ${suite.description}`);
    try {
      const result = await suite.run({ args, tools, machine, log, env });
      const file = path.join(OUT_DIR, `results-${name}.json`);
      await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
      log(`wrote ${path.relative(process.cwd(), file)}`);
    } catch (error) {
      failed++;
      process.stderr.write(`[bench] suite ${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    }
  }
  return failed ? 1 : 0;
}

process.exitCode = await main();
