// Suite `text`: `wmark watermark` with one TEXT setting vs a plain one-shot ffmpeg (decode -> drawtext -> libx264 -> HLS)
// on a generated 60 s 720p30 clip with audio, motion and texture. Alternates the two for N rounds and reports medians:
// wall and CPU time, the wmark/ffmpeg ratio for the complete job, wmark's time until its playlist is playable, and
// PSNR against the source outside the text area.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { drawtextFilter, fontPixels, framesPerSegment } from '../src/core/ffmpeg-plan.js';
import { parseSettings } from '../src/core/setting-schema.js';
import type { TextSetting } from '../src/core/setting-types.js';
import { median, runMeasured, waitForQuiet, type Measured } from './lib/measure.js';
import { fmt, formatMachine, OUT_DIR, REPO_ROOT, table, WMARK_BIN, type Suite, type SuiteContext } from './lib/suite.js';
import { diffOptions, psnr, sourceClip, x264Options, type Region } from './lib/video.js';

/** wmark's defaults (src/config/load-config.ts): the baseline must encode with the same preset and CRF. */
const PRESET = 'veryfast';
const CRF = 23;
const KEY = 'bench-text';
const PLAYLIST = 'video.m3u8';
const POLL_MS = 25;
const TARGET_RATIO = 1.0;
const TARGET_PLAYABLE_S = 3;

/** The one TEXT setting both jobs draw: bottom-right corner, so the rest of the frame can be compared with the source. */
const PLACEMENT = { x: 0.97, y: 0.95, align: 'RIGHT', verticalAlign: 'BOTTOM', fontSize: 0.04, fontOpacity: 0.5 } as const;

interface JobResult {
  wallS: number;
  cpuS: number;
  userS: number;
  sysS: number;
  /** Seconds from spawn until a playlist with at least one segment existed. */
  playableS: number | null;
  /** Average cores used by other processes on the machine during the job (noise; ideally ~0). */
  otherCores: number;
  outputDir: string;
}

interface RoundResult {
  round: number;
  text: string;
  baseline: JobResult;
  wmark: JobResult & { watermarkId: string };
}

function summarize(m: Measured, outputDir: string): JobResult {
  return { wallS: m.wallMs / 1000, cpuS: m.cpuS, userS: m.userS, sysS: m.sysS, playableS: m.readyMs === undefined ? null : m.readyMs / 1000, otherCores: m.foreignCpuS / (m.wallMs / 1000), outputDir };
}

function fail(what: string, m: Measured): never {
  throw new Error(`${what} exited with code ${m.exitCode}\n--- stderr (tail) ---\n${m.stderr.slice(-3000)}\n--- stdout (tail) ---\n${m.stdout.slice(-1000)}`);
}

/** A playlist file that lists at least one segment. */
function playlistPlayable(file: string): boolean {
  return existsSync(file) && readFileSync(file, 'utf8').includes('#EXTINF');
}

function playlistStats(file: string): { segments: number; seconds: number; ended: boolean } {
  const text = readFileSync(file, 'utf8');
  const durations = [...text.matchAll(/#EXTINF:([\d.]+)/g)].map((m) => Number(m[1]));
  return { segments: durations.length, seconds: durations.reduce((a, b) => a + b, 0), ended: text.includes('#EXT-X-ENDLIST') };
}

function textSetting(content: string): TextSetting {
  const parsed = parseSettings([{ type: 'TEXT', content, ...PLACEMENT }], { apiVersion: '2.0', path: 'bench' });
  if (!parsed.ok) throw new Error(`bench setting rejected: ${parsed.issues.join('; ')}`);
  return parsed.value[0] as TextSetting;
}

/**
 * The baseline a competent user would write: one ffmpeg, default threads, the same drawtext (text from a file,
 * expansion off), the same preset/CRF, fixed 4 s GOPs so the HLS muxer can cut 4 s segments, audio copied (wmark copies
 * the audio too), VOD HLS.
 */
function baselineArgs(source: string, filter: string, fps: number, outDir: string): string[] {
  const gop = String(framesPerSegment({ num: fps, den: 1 }));
  return [
    '-hide_banner', '-nostdin', '-loglevel', 'error', '-y',
    '-i', source,
    '-map', '0:v:0', '-map', '0:a:0?',
    '-vf', filter,
    '-c:v', 'libx264', '-preset', PRESET, '-crf', String(CRF), '-g', gop, '-keyint_min', gop, '-sc_threshold', '0', '-pix_fmt', 'yuv420p',
    '-c:a', 'copy',
    '-f', 'hls', '-hls_time', '4', '-hls_playlist_type', 'vod',
    '-hls_segment_filename', path.join(outDir, 'seg_%05d.ts'),
    path.join(outDir, PLAYLIST),
  ];
}

function wmarkArgs(dataDir: string, text: string, containers: string | undefined): string[] {
  return [
    WMARK_BIN, '--data-dir', dataDir, '--json', 'watermark', '--key', KEY, '--text', text,
    '--x', String(PLACEMENT.x), '--y', String(PLACEMENT.y), '--align', PLACEMENT.align, '--vertical-align', PLACEMENT.verticalAlign,
    '--font-size', String(PLACEMENT.fontSize), '--font-opacity', String(PLACEMENT.fontOpacity),
    ...(containers ? ['--containers', containers] : []),
  ];
}

/** Flush dirty pages between runs, so one job's writeback is not billed to the next. */
function settle(): void {
  try {
    execFileSync('sync');
  } catch {
    /* not fatal */
  }
}

function quote(args: string[]): string {
  return args.map((a) => (/^[\w./=:@,+-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

export const suite: Suite = {
  name: 'text',
  description: 'wmark watermark (one TEXT setting) vs a plain one-shot ffmpeg drawtext -> libx264 -> HLS, 60 s 720p30',
  async run(ctx: SuiteContext) {
    const { args, tools, log } = ctx;
    const opt = args.options;
    const seconds = opt.seconds !== undefined ? Number(opt.seconds) : 60;
    const containers = typeof opt.containers === 'string' ? opt.containers : undefined;
    const quietWaitMs = (opt['quiet-wait'] !== undefined ? Number(opt['quiet-wait']) : 120) * 1000;
    const quiet = () => (quietWaitMs > 0 ? waitForQuiet(0.3, quietWaitMs, log) : Promise.resolve(0));
    const spec = { width: 1280, height: 720, seconds, fps: 30, audio: true };

    const clip = await sourceClip(tools, spec, log);
    const clipBytes = statSync(clip.path).size;

    const runDir = path.join(OUT_DIR, 'text-run');
    await rm(runDir, { recursive: true, force: true });
    await mkdir(runDir, { recursive: true });
    const dataDir = path.join(runDir, 'data');
    // A neutral working folder: no wmark config file is found by searching upward from it.
    const cwd = await mkdtemp(path.join(os.tmpdir(), 'bench-text-cwd-'));
    const env: NodeJS.ProcessEnv = { ...ctx.env, NO_COLOR: '1' };
    delete env.WMARK_HOME;
    const setWmarkVars = Object.keys(env).filter((k) => k.startsWith('WMARK_'));
    if (setWmarkVars.length) log(`note: wmark runs with ${setWmarkVars.join(', ')} set in the environment`);

    // bin/wmark.js runs dist/ when it exists: warn when the build is older than the engine sources it measures.
    const stale = ['engine/watermark', 'engine/ingest', 'core/ffmpeg-plan', 'ffmpeg/run-ffmpeg', 'cli/commands/watermark'].filter((f) => {
      const js = path.join(REPO_ROOT, 'dist', `${f}.js`);
      return existsSync(js) && statSync(path.join(REPO_ROOT, 'src', `${f}.ts`)).mtimeMs > statSync(js).mtimeMs;
    });
    if (stale.length) log(`warning: dist/ is older than src/ for ${stale.join(', ')}; run \`npx tsc -p tsconfig.build.json\` to measure the current code`);

    // Warm the page cache and the node/ffmpeg binaries, so round 1 is not penalised.
    execFileSync(process.execPath, [WMARK_BIN, '--version'], { env, cwd, stdio: 'ignore' });
    execFileSync(tools.ffmpeg.path, ['-hide_banner', '-version'], { stdio: 'ignore' });

    // wmark ingest: a one-time cost per video, reported on its own and not part of the ratio.
    log('ingesting the source into wmark (one-time per video) ...');
    settle();
    await quiet();
    const ingest = await runMeasured(process.execPath, [WMARK_BIN, '--data-dir', dataDir, '--json', 'ingest', clip.path, '--key', KEY], { env, cwd });
    if (ingest.exitCode !== 0) fail('wmark ingest', ingest);
    const video = JSON.parse(ingest.stdout) as { id: string; segments: number; duration: number };
    log(`  ingested ${video.id}: ${video.segments} segments, ${(ingest.wallMs / 1000).toFixed(1)} s`);
    const wmRoot = path.join(dataDir, 'media', 'watermarks', video.id);

    const fontPx = fontPixels(textSetting('x'), clip.height);
    const rounds: RoundResult[] = [];
    let baselineCommand: string[] = [];
    let wmarkCommand: string[] = [];
    for (let r = 1; r <= args.rounds; r++) {
      // A new text each round (same length), so wmark never finds an existing watermark.
      const text = `bench r${r} viewer-${randomBytes(4).toString('hex')}@example.com`;
      const setting = textSetting(text);

      // 1. plain ffmpeg one-shot
      const bDir = path.join(runDir, `baseline-${r}`);
      await mkdir(bDir, { recursive: true });
      await writeFile(path.join(bDir, 'text_0.txt'), text, 'utf8');
      const filter = drawtextFilter({ setting, textFile: 'text_0.txt', fontFile: tools.font.path, frameHeight: clip.height, timeOrigin: 0 });
      baselineCommand = [tools.ffmpeg.path, ...baselineArgs(clip.path, filter, clip.fps, bDir)];
      log(`round ${r}/${args.rounds}: ffmpeg one-shot ...`);
      settle();
      await quiet();
      const b = await runMeasured(tools.ffmpeg.path, baselineCommand.slice(1), {
        cwd: bDir,
        env,
        poll: { intervalMs: POLL_MS, check: () => playlistPlayable(path.join(bDir, PLAYLIST)) },
      });
      if (b.exitCode !== 0) fail('baseline ffmpeg', b);
      log(`  ${(b.wallMs / 1000).toFixed(2)} s wall, ${b.cpuS.toFixed(2)} s cpu`);

      // 2. wmark watermark, as a user runs it
      wmarkCommand = [process.execPath, ...wmarkArgs(dataDir, text, containers)];
      log(`round ${r}/${args.rounds}: wmark watermark ...`);
      const before = new Set(existsSync(wmRoot) ? readdirSync(wmRoot) : []);
      settle();
      await quiet();
      const w = await runMeasured(process.execPath, wmarkCommand.slice(1), {
        cwd,
        env,
        poll: {
          intervalMs: POLL_MS,
          check: () => existsSync(wmRoot) && readdirSync(wmRoot).some((d) => !before.has(d) && playlistPlayable(path.join(wmRoot, d, PLAYLIST))),
        },
      });
      if (w.exitCode !== 0) fail('wmark watermark', w);
      const view = JSON.parse(w.stdout) as { id: string; status: string; created: boolean; files: { dir: string; m3u8?: string; mp4?: string } };
      if (view.status !== 'READY' || !view.created) throw new Error(`wmark returned status ${view.status} created=${view.created}; expected a new READY watermark`);
      log(`  ${(w.wallMs / 1000).toFixed(2)} s wall, ${w.cpuS.toFixed(2)} s cpu, playable after ${((w.readyMs ?? NaN) / 1000).toFixed(2)} s`);
      rounds.push({ round: r, text, baseline: summarize(b, bDir), wmark: { ...summarize(w, view.files.dir), watermarkId: view.id } });
    }

    // Fixed costs of a wmark run: process start, and a repeated request (the watermark exists, nothing is encoded).
    const startup = [] as number[];
    const repeat = [] as number[];
    const last = rounds[rounds.length - 1]!;
    for (let i = 0; i < 3; i++) {
      startup.push((await runMeasured(process.execPath, [WMARK_BIN, '--version'], { env, cwd })).wallMs / 1000);
      const again = await runMeasured(process.execPath, wmarkArgs(dataDir, last.text, containers), { env, cwd });
      if (again.exitCode !== 0) fail('wmark watermark (repeat)', again);
      repeat.push(again.wallMs / 1000);
    }

    // Quality: PSNR against the source, excluding the text area (bottom-right; keep the full-width band above it).
    log('measuring PSNR outside the text area ...');
    const textTop = Math.floor(PLACEMENT.y * clip.height - 2 * fontPx);
    const region: Region = { x: 0, y: 0, w: clip.width, h: Math.floor(textTop / 16) * 16 };
    const wDir = last.wmark.outputDir;
    const wOut = existsSync(path.join(wDir, 'video.mp4')) ? path.join(wDir, 'video.mp4') : path.join(wDir, PLAYLIST);
    const bOut = path.join(last.baseline.outputDir, PLAYLIST);
    const psnrW = await psnr(tools.ffmpeg.path, wOut, clip.path, region);
    const psnrB = await psnr(tools.ffmpeg.path, bOut, clip.path, region);
    const wList = playlistStats(path.join(wDir, PLAYLIST));
    const bList = playlistStats(bOut);
    const x264Diff = diffOptions(
      await x264Options(tools.ffmpeg.path, path.join(wDir, 'seg_00000.ts')),
      await x264Options(tools.ffmpeg.path, path.join(last.baseline.outputDir, 'seg_00000.ts')),
    );

    const med = (pick: (r: RoundResult) => number | null) => median(rounds.map((r) => pick(r) ?? NaN));
    const m = {
      baseline: { wallS: med((r) => r.baseline.wallS), cpuS: med((r) => r.baseline.cpuS), userS: med((r) => r.baseline.userS), sysS: med((r) => r.baseline.sysS), playableS: med((r) => r.baseline.playableS), otherCores: med((r) => r.baseline.otherCores) },
      wmark: { wallS: med((r) => r.wmark.wallS), cpuS: med((r) => r.wmark.cpuS), userS: med((r) => r.wmark.userS), sysS: med((r) => r.wmark.sysS), playableS: med((r) => r.wmark.playableS), otherCores: med((r) => r.wmark.otherCores) },
    };
    // The ratio per round (each wmark run against the baseline run just before it), and its median.
    const wallRatio = median(rounds.map((r) => r.wmark.wallS / r.baseline.wallS));
    const cpuRatio = median(rounds.map((r) => r.wmark.cpuS / r.baseline.cpuS));
    const cores = ctx.machine.availableParallelism;

    // ---- report ----
    const row = (label: string, j: Omit<JobResult, 'outputDir'>): (string | number)[] => [
      label, j.wallS, j.cpuS, j.userS, j.sysS, j.cpuS / j.wallS, j.playableS ?? NaN, j.otherCores,
    ];
    const rows: (string | number)[][] = [];
    for (const r of rounds) {
      rows.push(row(`${r.round}  ffmpeg one-shot`, r.baseline));
      rows.push(row(`${r.round}  wmark watermark`, r.wmark));
    }
    rows.push(row('median  ffmpeg one-shot', m.baseline));
    rows.push(row('median  wmark watermark', m.wmark));
    const maxOther = Math.max(...rounds.flatMap((r) => [r.baseline.otherCores, r.wmark.otherCores]));
    const verdict = (ok: boolean) => (ok ? 'OK' : 'MISSED');
    const lines = [
      '',
      `== bench text: wmark watermark vs plain ffmpeg one-shot, ${clip.seconds} s ${clip.width}x${clip.height} ${clip.fps} fps natural clip with audio ==`,
      formatMachine(ctx.machine),
      `source:  ${path.relative(process.cwd(), clip.path)} (${(clipBytes / 1e6).toFixed(1)} MB, ${((clipBytes * 8) / clip.seconds / 1e6).toFixed(1)} Mbit/s)${clip.generatedSeconds ? `, generated in ${clip.generatedSeconds.toFixed(1)} s (one-time)` : ', cached'}`,
      `encode:  libx264 -preset ${PRESET} -crf ${CRF}; text "${last.text.replace(/r\d+ viewer-\w+/, 'rN viewer-XXXXXXXX')}" at x ${PLACEMENT.x} y ${PLACEMENT.y} ${PLACEMENT.align}/${PLACEMENT.verticalAlign}, ${fontPx} px, opacity ${PLACEMENT.fontOpacity}; wmark containers: ${containers ?? 'default (m3u8,mp4)'}`,
      `ingest:  wall ${fmt(ingest.wallMs / 1000)} s, cpu ${fmt(ingest.cpuS)} s (${video.segments} segments; one-time per video, not part of the ratio)`,
      '',
      table(['round  job', 'wall s', 'cpu s', 'user s', 'sys s', 'cpu/wall', 'playable s', 'other load'], rows),
      '',
      `(cpu = user+sys of the whole process tree via ${ingest.cpuSource}; cpu/wall max ${cores}; playable = spawn until ${PLAYLIST} lists a segment, polled every ${POLL_MS} ms;`,
      ` other load = cores used by other processes during the job${maxOther > 0.2 ? ` -- up to ${fmt(maxOther)} here: the machine was shared, times are noisy` : ''})`,
      '',
      `ratio wmark/ffmpeg, complete job, wall:  ${fmt(wallRatio)}  (target <= ${fmt(TARGET_RATIO)})  ${verdict(wallRatio <= TARGET_RATIO)}`,
      `ratio wmark/ffmpeg, cpu time:            ${fmt(cpuRatio)}`,
      `  per round (wall): ${rounds.map((r) => `r${r.round} ${fmt(r.wmark.wallS / r.baseline.wallS)} (other load ${fmt(r.baseline.otherCores)}/${fmt(r.wmark.otherCores)})`).join(', ')}`,
      `wmark time until playlist playable:      ${fmt(m.wmark.playableS)} s  (target <= ${TARGET_PLAYABLE_S} s)  ${verdict(m.wmark.playableS <= TARGET_PLAYABLE_S)}   [ffmpeg one-shot first playlist: ${fmt(m.baseline.playableS)} s${Math.abs(m.baseline.playableS - m.baseline.wallS) < 0.5 ? ', i.e. only at the end (-hls_playlist_type vod)' : ''}]`,
      `wmark fixed costs: process start (--version) ${fmt(median(startup))} s, repeated request (nothing encoded) ${fmt(median(repeat))} s`,
      '',
      `PSNR vs source outside the text area (rows 0-${region.h - 1} of ${clip.height}, full width), last round:`,
      `  wmark watermark  Y ${fmt(psnrW.y)} dB  avg ${fmt(psnrW.average)} dB  (min ${fmt(psnrW.min)}, ${psnrW.frames} frames, from ${path.basename(wOut)})`,
      `  ffmpeg one-shot  Y ${fmt(psnrB.y)} dB  avg ${fmt(psnrB.average)} dB  (min ${fmt(psnrB.min)}, ${psnrB.frames} frames, from ${PLAYLIST})`,
      `outputs: wmark ${wList.segments} segments / ${fmt(wList.seconds)} s${wList.ended ? ' ENDLIST' : ''}; ffmpeg ${bList.segments} segments / ${fmt(bList.seconds)} s${bList.ended ? ' ENDLIST' : ''}`,
      `x264 settings that differ (wmark vs ffmpeg, first segment): ${x264Diff.length ? x264Diff.join('; ') : 'none'}`,
      '',
    ];
    process.stdout.write(lines.join('\n') + '\n');

    const result = {
      suite: 'text',
      date: new Date().toISOString(),
      machine: ctx.machine,
      source: { ...clip, bytes: clipBytes },
      placement: PLACEMENT,
      encode: { preset: PRESET, crf: CRF },
      containers: containers ?? 'default',
      commands: { baseline: quote(baselineCommand), wmark: quote(wmarkCommand) },
      ingest: { wallS: ingest.wallMs / 1000, cpuS: ingest.cpuS, userS: ingest.userS, sysS: ingest.sysS, segments: video.segments },
      rounds: rounds.map((r) => ({ ...r, baseline: { ...r.baseline, outputDir: undefined }, wmark: { ...r.wmark, outputDir: undefined } })),
      median: m,
      ratio: { wall: wallRatio, cpu: cpuRatio, perRoundWall: rounds.map((r) => r.wmark.wallS / r.baseline.wallS), target: TARGET_RATIO, met: wallRatio <= TARGET_RATIO },
      playable: { wmarkS: m.wmark.playableS, baselineS: m.baseline.playableS, target: TARGET_PLAYABLE_S, met: m.wmark.playableS <= TARGET_PLAYABLE_S },
      fixedCosts: { startupS: median(startup), repeatRequestS: median(repeat) },
      psnr: { region, wmark: psnrW, baseline: psnrB },
      outputs: { wmark: wList, baseline: bList },
      x264Diff,
    };

    await rm(cwd, { recursive: true, force: true });
    if (!args.keep) await rm(runDir, { recursive: true, force: true });
    else log(`kept working files in ${runDir}`);
    return result;
  },
};
