// Suite `forensic`: the A/B forensic watermark against FORENSIC.md targets F1-F8 on a generated 5-min clip (default
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
import { execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { rng } from '../harness/rng.js';
import { codeword, forensicKey, PAYLOAD_COUNT, packedCodebook, patternGrid } from '../src/core/forensic/keyed-bits.js';
import { MARK_AMPLITUDE, patternField, patternFrameYuv420 } from '../src/core/forensic/pattern-image.js';
import { type SegmentReading, scorePayloads, type Verdict, Z_THRESHOLD } from '../src/core/forensic/score.js';
import { decodeSidecar } from '../src/core/forensic/sidecar-format.js';
import { variantFileFor } from '../src/core/forensic/title-layout.js';
import { variantArgs } from '../src/core/forensic/variant-plan.js';
import { FORENSIC_LAYOUTS } from '../src/core/forensic-layout.js';
import { segmentFileName } from '../src/core/plan/segment-timing.js';
import { FORENSIC_DIR, SIDECAR_NAME } from '../src/engine/data-folder/layout.js';
import type { DetectResult } from '../src/engine/forensic/detect.js';
import { openEngine } from '../src/engine/open/open-engine.js';
import { readTitleLayout } from '../src/engine/watermark/watermark-segments.js';
import { ATTACKS, type Attack, even, multiOutputArgs, x264 } from './forensic-attacks.js';
import { type Ctx, detectKeepingFrames, type LeakOutcome } from './forensic-detect.js';
import { hardLeaks } from './forensic-hard-leaks.js';
import { dirBytes, ffmpeg, grayFrames, parsePsnrY, warmRead } from './lib/forensic-media.js';
import { PARTS, type Part, parseOnly, wants } from './lib/forensic-parts.js';
import { measureForensicViewer } from './lib/forensic-viewer.js';
import { cellMeans, meanAbsDiff } from './lib/frame-steps.js';
import { fail, median, runMeasured, settle, waitForQuiet } from './lib/measure.js';
import { fmt, formatMachine, OUT_DIR, type Suite, type SuiteContext, table, WMARK_BIN, wmarkEnvironment } from './lib/suite.js';
import { sourceClip } from './lib/video.js';

/** wmark's defaults (src/config/load-config.ts): the variants are encoded with these. */
const ENGINE_ENCODE = { preset: 'veryfast', crf: 23 } as const;
const PLAIN_KEY = 'bench-forensic-plain';
const FORENSIC_KEY = 'bench-forensic';
const SECONDS = 300;
const FPS = 30;

// Targets (FORENSIC.md).
const F2_TARGET_MIN = 3.5;
const F3_PSNR_DB = 47;
const F3_OVERHEAD = 0.01;
const F4_US = 50;
const F4_BYTES = 3 * 1024;
const F5_S = 60;
const F6_TRIALS = 1000;
const F8_RATIO = 2;
const F8_SIDECAR = 5 * 1024 * 1024;

const verdictOk = (ok: boolean) => (ok ? 'MET' : 'MISSED');
const mbps = (bytes: number, seconds: number) => (bytes * 8) / seconds / 1e6;

// ---------------------------------------------------------------------------------------------------------------

export const suite: Suite = {
  name: 'forensic',
  description: 'A/B forensic watermark vs FORENSIC.md F1-F8: attacks, short leaks, quality, cost, detect time, null trials, collusion',
  async run(ctx: SuiteContext) {
    const { args, tools, log } = ctx;
    const opt = args.options;
    const num = (name: string, def: number) => (opt[name] !== undefined && opt[name] !== true ? Number(opt[name]) : def);
    const payloadCount = num('payloads', 5);
    const height = num('height', 720);
    const width = even((height * 16) / 9);
    const threads = num('threads', 2);
    const seed = num('seed', randomInt(1, 2 ** 31));
    // Score-level null trials: every leak's readings against this many other titles' codebooks, plus noise readings.
    const nullCodebooks = num('null-codebooks', 20);
    const nullNoise = num('null-noise', 1000);
    const f3Samples = num('f3-segments', 12);
    const quietWaitMs = num('quiet-wait', 60) * 1000;
    // Full-resolution attacks cost a 720p re-encode each: 'rotate' runs each on one payload (in turn), 'all' on every payload.
    // 'auto' (default): 'rotate' first, then the remaining cells while the time budget allows.
    const fullAttacks = opt['full-attacks'] === 'all' || opt['full-attacks'] === 'rotate' ? opt['full-attacks'] : 'auto';
    const budgetMin = num('budget-min', 45);
    // F7's averaged copy is re-encoded at this scale (1 = full resolution).
    const collusionScale = num('collusion-scale', 1);
    const rawNull = opt['no-raw-null'] === undefined;
    const reuse = opt.reuse !== undefined;
    const layoutChoice = opt.layout === undefined ? 'whole' : String(opt.layout);
    if (!(FORENSIC_LAYOUTS as readonly string[]).includes(layoutChoice)) throw new Error(`--layout: one of ${FORENSIC_LAYOUTS.join(', ')}`);
    const only = parseOnly(opt.only);
    const want = (part: Part) => wants(only, part);
    if (!Number.isInteger(payloadCount) || payloadCount < 2) throw new Error('--payloads: at least 2 (F7 averages two viewers)');
    const quiet = () => (quietWaitMs > 0 ? waitForQuiet(0.3, quietWaitMs, log) : Promise.resolve(0));
    const R = rng(seed);
    const suiteT0 = performance.now();
    const elapsed = () => `${((performance.now() - suiteT0) / 60000).toFixed(1)} min`;
    const ff = tools.ffmpeg.path;

    const clip = await sourceClip(tools, { width, height, seconds: SECONDS, fps: FPS, audio: true }, log);
    const clipBytes = statSync(clip.path).size;

    const runDir = path.join(OUT_DIR, `forensic-run-${height}p${layoutChoice === 'whole' ? '' : `-${layoutChoice}`}`);
    log(`forensic layout: ${layoutChoice}`);
    if (!reuse) await rm(runDir, { recursive: true, force: true });
    const dataDir = path.join(runDir, 'data');
    const leakDir = path.join(runDir, 'leaks');
    await mkdir(leakDir, { recursive: true });
    const { cwd, env } = await wmarkEnvironment(ctx, 'bench-forensic-cwd-');
    const wmark = (...a: string[]) => [WMARK_BIN, '--data-dir', dataDir, '--json', ...a];
    execFileSync(process.execPath, [WMARK_BIN, '--version'], { env, cwd, stdio: 'ignore' });

    // ---- F8: plain vs forensic ingest ------------------------------------------------------------------------
    const ingestFile = path.join(runDir, 'ingest.json');
    type Timed = { wallS: number; cpuS: number; id: string; otherCores?: number };
    // The plain ingest is there for F8's ratio and F6's unmarked working copy only.
    const needPlain = want('f8') || want('f6');
    let ingest: { plain?: Timed; forensic: Timed; reused?: boolean };
    const earlier = reuse && existsSync(ingestFile) ? (JSON.parse(await readFile(ingestFile, 'utf8')) as typeof ingest) : undefined;
    if (earlier && (earlier.plain || !needPlain)) {
      ingest = { ...earlier, reused: true };
      log(`reusing the ingests of an earlier run (${ingestFile})`);
    } else {
      log('warming the page cache with the source ...');
      await warmRead(clip.path);
      const timed = async (label: string, extra: string[], key: string) => {
        log(`[${elapsed()}] ${label} ...`);
        settle();
        await quiet();
        const m = await runMeasured(process.execPath, wmark('ingest', clip.path, '--key', key, ...extra), { env, cwd });
        if (m.exitCode !== 0) fail(label, m);
        const v = JSON.parse(m.stdout) as { id: string; segments: number };
        log(`  ${label}: ${(m.wallMs / 1000).toFixed(1)} s wall, ${m.cpuS.toFixed(1)} s cpu, ${v.segments} segments`);
        return { wallS: m.wallMs / 1000, cpuS: m.cpuS, id: v.id, otherCores: m.foreignCpuS / (m.wallMs / 1000) };
      };
      const plain = needPlain ? await timed('wmark ingest (plain)', [], PLAIN_KEY) : undefined;
      const forensic = earlier?.forensic ?? (await timed(`wmark ingest --forensic-layout ${layoutChoice}`, ['--forensic-layout', layoutChoice], FORENSIC_KEY));
      ingest = { ...(plain ? { plain } : {}), forensic, ...(earlier ? { reused: true } : {}) };
      await writeFile(ingestFile, JSON.stringify({ plain: ingest.plain, forensic: ingest.forensic }));
    }

    const engine = await openEngine({ dataDir, workers: threads, encode: { ...ENGINE_ENCODE } });
    try {
      const video = (await engine.store.getVideoByKey(FORENSIC_KEY))!;
      const plainVideo = await engine.store.getVideoByKey(PLAIN_KEY);
      const videoDir = path.join(dataDir, 'media', 'videos', video.id);
      const forensicDir = path.join(videoDir, FORENSIC_DIR);
      const sidecarBytes = statSync(path.join(forensicDir, SIDECAR_NAME)).size;
      const sidecar = decodeSidecar(await readFile(path.join(forensicDir, SIDECAR_NAME)));
      const segments = video.segments.length;
      const key = forensicKey(engine.secret);
      let t = performance.now();
      const layout = await readTitleLayout(engine, video);
      const codes = packedCodebook(key, video.id, layout.slots);
      const codebookS = (performance.now() - t) / 1000;
      const c: Ctx = { engine, video, sidecar, codes, segments, layout };
      const variantBytes = dirBytes(forensicDir, (f) => f.endsWith('.ts'));
      const workingBytes = dirBytes(videoDir, (f) => f.endsWith('.ts'));
      const plainWorkingBytes = plainVideo ? dirBytes(path.join(dataDir, 'media', 'videos', plainVideo.id), (f) => f.endsWith('.ts')) : NaN;
      log(`video ${video.id}: ${segments} segments, sidecar ${(sidecarBytes / 1e6).toFixed(2)} MB, codebook ${codebookS.toFixed(2)} s`);

      // ---- F4: viewers ---------------------------------------------------------------------------------------
      const payloads: number[] = [];
      while (payloads.length < payloadCount) {
        const u = R.int(PAYLOAD_COUNT);
        if (!payloads.includes(u)) payloads.push(u);
      }
      log(`payloads (seed ${seed}): ${payloads.join(', ')}`);
      interface Viewer {
        payload: number;
        id: string;
        mp4: string;
        m3u8: { wallS: number; cpuS: number };
        mp4Join: { wallS: number; cpuS: number };
        playlistBytes: number;
        linkedSegments: number;
        mp4Bytes: number;
      }
      const viewers: Viewer[] = [];
      for (const u of payloads) {
        settle();
        const m1 = await runMeasured(process.execPath, wmark('watermark', '--key', FORENSIC_KEY, '--forensic', String(u), '--containers', 'm3u8'), {
          env,
          cwd,
        });
        if (m1.exitCode !== 0) fail('wmark watermark --forensic (m3u8)', m1);
        const m2 = await runMeasured(process.execPath, wmark('watermark', '--key', FORENSIC_KEY, '--forensic', String(u), '--containers', 'mp4'), { env, cwd });
        if (m2.exitCode !== 0) fail('wmark watermark --forensic (mp4)', m2);
        const view = JSON.parse(m2.stdout) as { id: string; status: string; files: { dir: string; m3u8?: string; mp4?: string } };
        if (view.status !== 'READY' || !view.files.mp4) throw new Error(`watermark ${view.id}: status ${view.status}, no mp4`);
        const code = codeword(key, video.id, u, layout.slots);
        let linked = 0;
        for (let k = 0; k < segments; k++) {
          const seg = statSync(path.join(view.files.dir, segmentFileName(k)));
          const variant = statSync(path.join(forensicDir, variantFileFor(layout, code, k)));
          if (seg.ino === variant.ino && seg.dev === variant.dev) linked++;
        }
        const m3u8 = path.join(view.files.dir, 'video.m3u8');
        viewers.push({
          payload: u,
          id: view.id,
          mp4: view.files.mp4,
          m3u8: { wallS: m1.wallMs / 1000, cpuS: m1.cpuS },
          mp4Join: { wallS: m2.wallMs / 1000, cpuS: m2.cpuS },
          playlistBytes: existsSync(m3u8) ? statSync(m3u8).size : NaN,
          linkedSegments: linked,
          mp4Bytes: statSync(view.files.mp4).size,
        });
        log(
          `  viewer ${u}: watermark ${(m1.wallMs / 1000).toFixed(2)} s (m3u8), +${(m2.wallMs / 1000).toFixed(2)} s (mp4 join), ${linked}/${segments} segments are links to variant files`,
        );
      }
      // The per-viewer playlist itself: codeword + writeMediaPlaylist over the video's segments, timed in a child
      // process so this suite's heap (codebooks, decoded frames to come) does not distort tens of microseconds.
      const viewerTiming = want('f4')
        ? await measureForensicViewer({
            keyHex: key.toString('hex'),
            videoId: video.id,
            layoutVersion: layout.version,
            slotsPerSegment: layout.slotsPerSegment,
            segments: video.segments,
            iterations: 2000,
          })
        : { playlistUs: NaN, playlistWithCodewordUs: NaN, playlistBytes: NaN, samplesUs: [], samplesWithCodewordUs: [] };
      const { playlistUs, playlistWithCodewordUs: playlistCodeUs, playlistBytes } = viewerTiming;

      // ---- F1: attacks x payloads, detected in-process -------------------------------------------------------
      const fullResAttacks = ATTACKS.filter((a) => !a.downscaled);
      // 'rotate': full-resolution attack j runs on payload j mod N (with fewer payloads than attacks, some get two).
      const plan = payloads.map((u, pi) => ({
        payload: u,
        attacks: ATTACKS.filter((a) => a.downscaled || fullAttacks === 'all' || fullResAttacks.indexOf(a) % payloadCount === pi),
      }));
      const f1: (LeakOutcome & { attack: string })[] = [];
      const attackWall: number[] = [];
      /** Wall seconds per unit of attack work (one full-size encode; a downscaled one counts by its pixels; the decode 0.3). */
      const attackUnits: number[] = [];
      const batches: { attacks: Attack[]; wallS: number }[] = [];
      const units = (attacks: Attack[]) => 0.3 + attacks.reduce((a, x) => a + x.scale ** 2, 0);
      const leakFile = (u: number, a: string) => path.join(leakDir, `p${u}-${a}.mp4`);
      const runAttacks = async (pi: number, attacks = plan[pi]!.attacks) => {
        const { payload } = plan[pi]!;
        const viewer = viewers[pi]!;
        const branches = attacks.map((a) => ({ filter: a.filter(width, height), out: leakFile(payload, a.id), crf: a.crf, extra: a.extra }));
        if (reuse && branches.every((b) => existsSync(b.out))) return;
        log(`[${elapsed()}] attacks on viewer ${payload}: ${attacks.map((a) => a.id).join(', ')} ...`);
        const r = await ffmpeg(ff, multiOutputArgs(viewer.mp4, branches, threads));
        attackWall.push(r.wallS);
        attackUnits.push(r.wallS / units(attacks));
        batches.push({ attacks, wallS: r.wallS });
        log(`  attacks on viewer ${payload}: ${r.wallS.toFixed(1)} s`);
      };
      const detectAll = async (pi: number, attacks = plan[pi]!.attacks) => {
        const { payload } = plan[pi]!;
        for (const a of attacks) {
          const file = leakFile(payload, a.id);
          const o = await detectKeepingFrames(c, `${a.id}/${payload}`, file, [payload]);
          f1.push({ ...o, attack: a.id });
          log(
            `  detect ${a.id} / ${payload}: ${o.verdict}, z ${fmt(o.trueZ[0]!)} rank ${o.trueRank[0]} (best ${o.best} z ${fmt(o.bestZ)}), ${o.segmentsRead} segments, ${o.detectS.toFixed(1)} s`,
          );
          if (!a.downscaled && !args.keep) await rm(file, { force: true });
        }
      };
      // Pipeline: payload i+1's attack encodes run while payload i's leaks are detected.
      if (want('f1')) {
        await runAttacks(0);
        for (let pi = 0; pi < payloads.length; pi++) {
          await Promise.all([detectAll(pi), pi + 1 < payloads.length ? runAttacks(pi + 1) : Promise.resolve()]);
        }
      }

      // ---- F2: short leaks ---------------------------------------------------------------------------------
      const f2: (LeakOutcome & { minutes: number; startS: number })[] = [];
      if (want('f2')) {
        const f2Payload = payloads[0]!;
        const f2Lengths = [3.5, 3.0, 2.5];
        const window = { start: Number((R.next() * (SECONDS - f2Lengths[0]! * 60 - 1)).toFixed(3)), duration: f2Lengths[0]! * 60 };
        const f2Branches = f2Lengths.map((min) => {
          // Each shorter leak starts at its own random point inside the decoded 3.5-min window.
          const offset = Number((R.next() * (f2Lengths[0]! - min) * 60).toFixed(3));
          return { min, offset, out: path.join(leakDir, `f2-p${f2Payload}-${min}min.mp4`) };
        });
        log(`[${elapsed()}] F2: leaks of ${f2Lengths.join(', ')} min from viewer ${f2Payload}, window from ${window.start.toFixed(1)} s ...`);
        await ffmpeg(
          ff,
          multiOutputArgs(
            viewers[0]!.mp4,
            f2Branches.map((b) => ({
              filter: `trim=start=${b.offset}:duration=${b.min * 60},setpts=PTS-STARTPTS,scale=${even(width / 2)}:${even(height / 2)}`,
              out: b.out,
              crf: 30,
            })),
            threads,
            window,
          ),
        );
        for (const b of f2Branches) {
          const o = await detectKeepingFrames(c, `f2-${b.min}min`, b.out, [f2Payload]);
          f2.push({ ...o, minutes: b.min, startS: window.start + b.offset });
          log(`  ${b.min} min from ${(window.start + b.offset).toFixed(1)} s: ${o.verdict}, z ${fmt(o.trueZ[0]!)}, ${o.segmentsRead} segments`);
        }
      }
      const f2Shortest = f2
        .filter((o) => o.verdict === 'correct')
        .map((o) => o.minutes)
        .sort((a, b) => a - b)[0];

      // ---- F7: two viewers averaged -------------------------------------------------------------------------
      const [u1, u2] = [payloads[0]!, payloads[1]!];
      let f7: LeakOutcome | undefined;
      if (want('f7')) {
        const f7File = path.join(leakDir, `f7-average-${u1}-${u2}.mp4`);
        log(`[${elapsed()}] F7: averaging viewers ${u1} and ${u2} (re-encoded at ${collusionScale}x, CRF 23) ...`);
        const scaleF7 = collusionScale === 1 ? '' : `,scale=${even(width * collusionScale)}:${even(height * collusionScale)}`;
        await ffmpeg(ff, [
          '-hide_banner',
          '-nostdin',
          '-loglevel',
          'error',
          '-y',
          '-threads',
          String(threads),
          '-i',
          viewers[0]!.mp4,
          '-threads',
          String(threads),
          '-i',
          viewers[1]!.mp4,
          '-filter_complex',
          `[0:v][1:v]blend=all_mode=average${scaleF7}[v]`,
          '-map',
          '[v]',
          '-an',
          ...x264(23, threads),
          f7File,
        ]);
        f7 = await detectKeepingFrames(c, 'f7-average', f7File, [u1, u2]);
        log(`  F7: accused ${f7.accused.join(', ') || 'nobody'}, collusion ${f7.collusion}, z ${f7.trueZ.map((z) => fmt(z)).join(' / ')}`);
        if (!args.keep) await rm(f7File, { force: true });
      }

      // ---- F6: null trials ----------------------------------------------------------------------------------
      const nullReal: LeakOutcome[] = [];
      if (want('f6')) {
        log(`[${elapsed()}] F6: unmarked copies and other titles ...`);
        const half = `scale=${even(width / 2)}:${even(height / 2)}`;
        const nullDir = path.join(leakDir, 'null');
        await mkdir(nullDir, { recursive: true });
        const nullBranches = [
          { name: 'unmarked source, CRF 30 + 0.5x', filter: half, crf: 30 },
          { name: 'other title: hflip, 0.5x', filter: `hflip,${half}`, crf: 23 },
          { name: 'other title: vflip, 0.5x', filter: `vflip,${half}`, crf: 23 },
          { name: 'other title: rotated 180, 0.5x', filter: `hflip,vflip,${half}`, crf: 23 },
          { name: 'other title: 2x zoom (top-left quarter)', filter: `crop=${even(width / 2)}:${even(height / 2)}:0:0`, crf: 23 },
          { name: 'unmarked, re-edited (halves swapped), 0.5x', filter: '', crf: 23 },
        ].map((b, i) => ({ ...b, out: path.join(nullDir, `null-${i}.mp4`) }));
        // Re-edited: the second half of the clip played first (made from the first output below, not in the split graph).
        const simple = nullBranches.slice(0, 5);
        await ffmpeg(ff, multiOutputArgs(clip.path, simple, threads));
        {
          const halfS = SECONDS / 2;
          await ffmpeg(ff, [
            '-hide_banner',
            '-nostdin',
            '-loglevel',
            'error',
            '-y',
            '-threads',
            String(threads),
            '-i',
            nullBranches[0]!.out,
            '-filter_complex',
            `[0:v]split[a][b];[a]trim=start=${halfS},setpts=PTS-STARTPTS[x];[b]trim=end=${halfS},setpts=PTS-STARTPTS[y];[x][y]concat=n=2:v=1:a=0[v]`,
            '-map',
            '[v]',
            '-an',
            ...x264(23, threads),
            nullBranches[5]!.out,
          ]);
        }
        if (rawNull) {
          const o = await detectKeepingFrames(c, 'unmarked source (as generated)', clip.path, []);
          nullReal.push(o);
          log(`  unmarked source: ${o.verdict}, best z ${fmt(o.bestZ)}`);
        }
        {
          // The plain ingest's working form re-joined: another unmarked copy that went through wmark.
          const plainDir = path.join(dataDir, 'media', 'videos', plainVideo!.id);
          const list = path.join(nullDir, 'plain-concat.txt');
          const files = plainVideo!.segments.map((_, i) => path.join(plainDir, segmentFileName(i)));
          const out = path.join(nullDir, 'plain-working-half.mp4');
          await writeFile(list, files.map((f) => `file '${f}'`).join('\n'));
          await ffmpeg(ff, [
            '-hide_banner',
            '-nostdin',
            '-loglevel',
            'error',
            '-y',
            '-threads',
            String(threads),
            '-f',
            'concat',
            '-safe',
            '0',
            '-i',
            list,
            '-map',
            '0:v:0',
            '-vf',
            half,
            '-an',
            ...x264(23, threads),
            out,
          ]);
          nullBranches.push({ name: 'unmarked: plain ingest working copy, 0.5x', filter: half, crf: 23, out });
        }
        for (const b of nullBranches) {
          const o = await detectKeepingFrames(c, b.name, b.out, []);
          nullReal.push(o);
          log(`  ${b.name}: ${o.verdict}, best z ${fmt(o.bestZ)}, ${o.segmentsRead} segments, alignment ${fmt(o.alignment.score, 3)}`);
        }
      }

      // Score-level trials: real readings of unmarked copies, other titles and marked leaks, against the codebooks
      // of other video ids (a leak scored against the wrong title); and pure-noise readings against this title.
      const readingSets = [
        ...nullReal.map((o) => ({ name: o.name, readings: o.readings })),
        ...f1.map((o) => ({ name: `marked leak ${o.name}`, readings: o.readings })),
      ].filter((s) => s.readings.length > 0);
      interface TrialStats {
        trials: number;
        accusations: number;
        maxZ: number;
        over5: number;
        collusionFlags: number;
        seconds: number;
      }
      const stats = (): TrialStats => ({ trials: 0, accusations: 0, maxZ: -Infinity, over5: 0, collusionFlags: 0, seconds: 0 });
      const record = (s: TrialStats, v: Verdict) => {
        s.trials++;
        if (v.accused.length) s.accusations++;
        if (v.collusion.suspected) s.collusionFlags++;
        const z = v.best?.z ?? 0;
        s.maxZ = Math.max(s.maxZ, z);
        if (z >= 5) s.over5++;
      };
      const codebookTrials = stats();
      const noiseTrials = stats();
      const unmarkedRms = (() => {
        const all = nullReal.flatMap((o) => o.readings.map((r) => r.value));
        return all.length ? Math.sqrt(all.reduce((a, v) => a + v * v, 0) / all.length) : 0.3;
      })();
      if (want('f6')) {
        log(`[${elapsed()}] F6: ${nullCodebooks} codebook trials and ${nullNoise} noise trials ...`);
        t = performance.now();
        for (let i = 0; i < nullCodebooks; i++) {
          const other = packedCodebook(key, `bench-other-title-${seed}-${i}`, layout.slots);
          for (const set of readingSets) record(codebookTrials, scorePayloads(set.readings, other));
        }
        codebookTrials.seconds = (performance.now() - t) / 1000;
        t = performance.now();
        for (let i = 0; i < nullNoise; i++) {
          // Alternate: noise at the unmarked copies' reading level, unit noise, and heavy-tailed (clamped) noise.
          const kind = i % 3;
          const readings: SegmentReading[] = [];
          for (let k = 0; k < segments; k++) {
            let v = kind === 0 ? unmarkedRms * R.gauss() : kind === 1 ? R.gauss() : R.gauss() / Math.max(0.05, Math.abs(R.gauss()));
            v = Math.max(-2, Math.min(2, v));
            readings.push({ segment: k, value: v, frames: 120 });
          }
          record(noiseTrials, scorePayloads(readings, codes));
        }
        noiseTrials.seconds = (performance.now() - t) / 1000;
      }
      const realNullAccusations = nullReal.filter((o) => o.accused.length > 0).length;
      const f6Trials = nullReal.length + codebookTrials.trials + noiseTrials.trials;
      const f6Accusations = realNullAccusations + codebookTrials.accusations + noiseTrials.accusations;

      // ---- F3: mark PSNR, bitrate overhead, segment edges -----------------------------------------------------
      // Sampled as pairs of neighbouring segments (k, k+1), so each pair also gives one segment edge to inspect.
      const pairs = Math.max(1, Math.min(Math.floor(f3Samples / 2), Math.floor(segments / 2)));
      const pairStarts = Array.from({ length: pairs }, (_, i) => Math.min(segments - 2, Math.floor(((i + 0.5) * (segments - 1)) / pairs)));
      if (want('f3')) log(`[${elapsed()}] F3: mark quality and bitrate on ${pairs * 2} sampled segments (${pairs} edges) ...`);
      const f3Dir = path.join(runDir, 'f3');
      await mkdir(f3Dir, { recursive: true });
      const gop = Math.round(4 * FPS);
      const f3Rows: {
        k: number;
        markPsnrY: number;
        markPsnrCalc: number;
        markPsnrNoDither: number;
        aBytes: number;
        bBytes: number;
        cleanBytes: number;
        aVsClean: number;
        aVsWorking: number;
        cleanVsWorking: number;
      }[] = [];
      const edges: {
        k: number;
        viewerEdge: number;
        cleanEdge: number;
        viewerInside: number;
        step: { meanAbs: number; maxAbs: number };
        designStep: { meanAbs: number; maxAbs: number };
      }[] = [];
      const code0 = codeword(key, video.id, payloads[0]!, layout.slots);
      const viewerSeg = (k: number) => path.join(path.dirname(viewers[0]!.mp4), segmentFileName(k));
      const cleanSeg = (k: number) => path.join(f3Dir, `clean_${k}.ts`);
      // Frames are paired by order: each file's video is re-timed to start at 0 (a variant carries audio that starts
      // earlier than its video, the clean re-encode has none, so their normalised timestamps differ).
      const psnrOf = async (x: string, y: string) =>
        parsePsnrY(
          (
            await ffmpeg(ff, [
              '-hide_banner',
              '-nostdin',
              '-i',
              x,
              '-i',
              y,
              '-lavfi',
              '[0:v]setpts=PTS-STARTPTS[x];[1:v]setpts=PTS-STARTPTS[y];[x][y]psnr',
              '-f',
              'null',
              '-',
            ])
          ).stderr,
        );
      // Video-only bytes: the audio is copied identically into every variant, so it is left out of the overhead.
      const videoBytes = async (file: string) =>
        (await ffmpeg(ff, ['-v', 'error', '-i', file, '-map', '0:v:0', '-c', 'copy', '-f', 'h264', 'pipe:1'])).stdout.length;
      const measureSegment = async (k: number) => {
        const working = path.join(videoDir, segmentFileName(k));
        const pattern = path.join(f3Dir, `pattern_${k}.yuv`);
        const frame = patternFrameYuv420(patternGrid(key, video.id, k), width, height);
        await writeFile(pattern, frame);
        // The mark alone: PSNR of working+pattern (grainmerge, as variant A is made) against working, before any encode.
        const markRun = await ffmpeg(ff, [
          '-hide_banner',
          '-nostdin',
          '-threads',
          '1',
          '-i',
          working,
          '-f',
          'rawvideo',
          '-pix_fmt',
          'yuv420p',
          '-s',
          `${width}x${height}`,
          '-i',
          pattern,
          '-filter_complex',
          '[0:v]split[v0][v1];[v0][1:v]blend=c0_mode=grainmerge:c1_mode=normal:c2_mode=normal[a];[a][v1]psnr',
          '-f',
          'null',
          '-',
        ]);
        await rm(pattern, { force: true });
        let sq = 0;
        for (let p = 0; p < width * height; p++) sq += (frame[p]! - 128) ** 2;
        let sqIdeal = 0;
        for (const f of patternField(patternGrid(key, video.id, k), width, height)) sqIdeal += (MARK_AMPLITUDE * f) ** 2;
        // The clean working segment encoded exactly as the variants are (same settings; encoder threads as for A).
        await ffmpeg(ff, [
          '-y',
          '-hide_banner',
          '-nostdin',
          '-loglevel',
          'error',
          '-copyts',
          '-threads',
          '1',
          '-i',
          working,
          '-threads',
          '1',
          '-map',
          '0:v:0',
          '-c:v',
          'libx264',
          '-preset',
          ENGINE_ENCODE.preset,
          '-crf',
          String(ENGINE_ENCODE.crf),
          '-g',
          String(gop),
          '-keyint_min',
          String(gop),
          '-sc_threshold',
          '0',
          '-x264-params',
          'open-gop=0',
          '-pix_fmt',
          'yuv420p',
          '-muxdelay',
          '0',
          '-f',
          'mpegts',
          cleanSeg(k),
        ]);
        const a = path.join(forensicDir, variantFileFor(layout, [1, 1], k).replace(/^[ab]+/, layout.slotsPerSegment[k] === 2 ? 'aa' : 'a'));
        const b = path.join(forensicDir, variantFileFor(layout, [-1, -1], k).replace(/^[ab]+/, layout.slotsPerSegment[k] === 2 ? 'bb' : 'b'));
        f3Rows.push({
          k,
          markPsnrY: parsePsnrY(markRun.stderr),
          markPsnrCalc: 10 * Math.log10((255 * 255) / (sq / (width * height))),
          markPsnrNoDither: 10 * Math.log10((255 * 255) / (sqIdeal / (width * height))),
          aBytes: await videoBytes(a),
          bBytes: await videoBytes(b),
          cleanBytes: await videoBytes(cleanSeg(k)),
          aVsClean: await psnrOf(a, cleanSeg(k)),
          aVsWorking: await psnrOf(a, working),
          cleanVsWorking: await psnrOf(cleanSeg(k), working),
        });
      };
      // Baseline check: the variant pipeline itself (src variantArgs) with an all-grey pattern must give exactly the clean re-encode.
      let baselineIdentical: boolean | null = null;
      const measureControl = async (k: number) => {
        const grey = path.join(f3Dir, 'grey.yuv');
        await writeFile(grey, Buffer.alloc((width * height * 3) / 2, 128));
        const outA = path.join(f3Dir, `grey_a_${k}.ts`);
        const outB = path.join(f3Dir, `grey_b_${k}.ts`);
        await ffmpeg(ff, [
          '-hide_banner',
          '-nostdin',
          '-loglevel',
          'error',
          ...variantArgs({
            input: path.join(videoDir, segmentFileName(k)),
            pattern: grey,
            width,
            height,
            outA,
            outB,
            gop,
            encode: ENGINE_ENCODE,
            hasAudio: video.hasAudio,
          }),
        ]);
        const [g, cl] = await Promise.all([
          ffmpeg(ff, ['-v', 'error', '-i', outA, '-map', '0:v:0', '-c', 'copy', '-f', 'h264', 'pipe:1']),
          ffmpeg(ff, ['-v', 'error', '-i', cleanSeg(k), '-map', '0:v:0', '-c', 'copy', '-f', 'h264', 'pipe:1']),
        ]);
        baselineIdentical = g.stdout.equals(cl.stdout);
        await rm(grey, { force: true });
      };
      for (const k of want('f3') ? pairStarts : []) {
        await measureSegment(k);
        if (baselineIdentical === null) await measureControl(k);
        await measureSegment(k + 1);
        // Edge k -> k+1: the viewer's copy (payload 0's variants) against the clean re-encode with the same settings.
        const frames = Math.round(video.segments[k]! * FPS);
        const [vPrev, vLast] = await grayFrames(ff, viewerSeg(k), [frames - 2, frames - 1], width, height);
        const [vFirst] = await grayFrames(ff, viewerSeg(k + 1), [0], width, height);
        const [cLast] = await grayFrames(ff, cleanSeg(k), [frames - 1], width, height);
        const [cFirst] = await grayFrames(ff, cleanSeg(k + 1), [0], width, height);
        // The mark's change at this edge by design: s_k+1 * a * P_k+1 - s_k * a * P_k.
        const pk = patternField(patternGrid(key, video.id, k), width, height);
        const pk1 = patternField(patternGrid(key, video.id, k + 1), width, height);
        edges.push({
          k,
          viewerEdge: meanAbsDiff(vLast!, vFirst!),
          cleanEdge: meanAbsDiff(cLast!, cFirst!),
          viewerInside: meanAbsDiff(vPrev!, vLast!),
          step: cellMeans((i) => vFirst![i]! - vLast![i]! - (cFirst![i]! - cLast![i]!), width, height),
          designStep: cellMeans((i) => MARK_AMPLITUDE * (code0[k + 1]! * pk1[i]! - code0[k]! * pk[i]!), width, height),
        });
      }
      const sum = (f: (r: (typeof f3Rows)[number]) => number) => f3Rows.reduce((acc, r) => acc + f(r), 0);
      const overheadA = sum((r) => r.aBytes) / sum((r) => r.cleanBytes) - 1;
      const overheadB = sum((r) => r.bBytes) / sum((r) => r.cleanBytes) - 1;
      const overheadAB = (sum((r) => r.aBytes) + sum((r) => r.bBytes)) / (2 * sum((r) => r.cleanBytes)) - 1;
      const markPsnr = -10 * Math.log10(f3Rows.reduce((acc, r) => acc + 10 ** (-r.markPsnrY / 10), 0) / f3Rows.length);
      const markPsnrCalc = -10 * Math.log10(f3Rows.reduce((acc, r) => acc + 10 ** (-r.markPsnrCalc / 10), 0) / f3Rows.length);
      const edgeExtra = median(edges.map((e) => e.viewerEdge - e.cleanEdge));
      const stepMax = Math.max(...edges.map((e) => e.step.maxAbs));
      const stepMean = edges.reduce((a, e) => a + e.step.meanAbs, 0) / Math.max(1, edges.length);
      const designMax = Math.max(...edges.map((e) => e.designStep.maxAbs));
      const designMean = edges.reduce((a, e) => a + e.designStep.meanAbs, 0) / Math.max(1, edges.length);
      const markPsnrNoDither = -10 * Math.log10(f3Rows.reduce((acc, r) => acc + 10 ** (-r.markPsnrNoDither / 10), 0) / f3Rows.length);
      // "Visible step" proxy (the brief's check): at a segment edge the viewer's copy may change by at most 10 % more
      // (mean |dY|, last frame of k -> first of k+1) than the clean copy encoded with the same settings changes there.
      const edgeRatio = median(edges.map((e) => e.viewerEdge / e.cleanEdge));
      const stepOk = edgeRatio <= 1.1;

      // ---- F5: `wmark detect` on the full 720p leak (the viewer's copy itself), end to end ---------------------
      let f5 = { wallS: NaN, cpuS: NaN, otherCores: NaN, engineElapsedS: NaN, found: false, correct: false, z: NaN, bytes: viewers[0]!.mp4Bytes, seconds: NaN };
      if (want('f5')) {
        log(`[${elapsed()}] F5: wmark detect on viewer ${payloads[0]}'s full copy ...`);
        settle();
        await quiet();
        const f5m = await runMeasured(process.execPath, wmark('detect', viewers[0]!.mp4, '--key', FORENSIC_KEY), { env, cwd });
        if (f5m.exitCode !== 0 && f5m.exitCode !== 8) fail('wmark detect', f5m);
        const f5r = JSON.parse(f5m.stdout) as DetectResult;
        f5 = {
          wallS: f5m.wallMs / 1000,
          cpuS: f5m.cpuS,
          otherCores: f5m.foreignCpuS / (f5m.wallMs / 1000),
          engineElapsedS: f5r.elapsedMs / 1000,
          found: f5r.found,
          correct: f5r.accused.length === 1 && f5r.accused[0]!.payload === payloads[0],
          z: f5r.best?.z ?? NaN,
          bytes: viewers[0]!.mp4Bytes,
          seconds: f5r.leak.durationSeconds,
        };
        log(`  ${f5.wallS.toFixed(1)} s wall (${f5.cpuS.toFixed(1)} s cpu), correct ${f5.correct}, z ${fmt(f5.z)}`);
      }
      // Stage breakdown from the in-process detects of full-resolution leaks (decode dominates).
      const fullResDetects = f1.filter((o) => !ATTACKS.find((a) => a.id === o.attack)!.downscaled);
      const stageNames = [...new Set(fullResDetects.flatMap((o) => Object.keys(o.stages)))];
      const stageMedians = Object.fromEntries(stageNames.map((s) => [s, median(fullResDetects.map((o) => o.stages[s] ?? NaN))]));

      // ---- F1, continued: the remaining full-resolution cells, while the time budget allows ---------------------
      const skipped: string[] = [];
      if (fullAttacks === 'auto' && want('f1')) {
        // Cost of one more full-resolution cell, from the first round: its batch's wall time minus the shared part
        // (decode + downscaled encodes, priced from the cheapest batch), plus its detect time.
        // (With --reuse the first round may have encoded nothing: then a rough 20 s per unit.)
        const unit = batches.length ? Math.min(...batches.map((b) => b.wallS / units(b.attacks))) : 20;
        const shared = (b: { attacks: Attack[] }) => unit * units(b.attacks.filter((a) => a.downscaled));
        const cost = (a: Attack) => {
          const b = batches.find((x) => x.attacks.includes(a));
          const d = f1.find((o) => o.attack === a.id)?.detectS ?? 30;
          return (b ? Math.max(unit * 0.5, b.wallS - shared(b)) : unit * 3) + d;
        };
        let cells = payloads.flatMap((u, pi) => fullResAttacks.filter((a) => !plan[pi]!.attacks.includes(a)).map((a) => ({ pi, u, a, cost: cost(a) })));
        cells.sort((x, y) => x.cost - y.cost || x.pi - y.pi);
        for (;;) {
          const leftS = budgetMin * 60 - (performance.now() - suiteT0) / 1000 - 90;
          // Cheapest cells first, over all viewers (a viewer's copy is decoded once per batch); run one viewer's share.
          let total = 0;
          const touched = new Set<number>();
          const selected = cells.filter((c) => {
            const extra = c.cost + (touched.has(c.pi) ? 0 : unit * 0.3);
            if (total + extra > leftS) return false;
            total += extra;
            touched.add(c.pi);
            return true;
          });
          if (!selected.length) break;
          const first = selected[0]!;
          const batch = selected.filter((c) => c.pi === first.pi);
          total = unit * 0.3 + batch.reduce((acc, c) => acc + c.cost, 0);
          const attacks = batch.map((c) => c.a);
          log(`  budget: ${Math.round(leftS)} s left; ${attacks.length} more full-resolution attack(s) on viewer ${first.u} (about ${Math.round(total)} s)`);
          plan[first.pi]!.attacks.push(...attacks);
          await runAttacks(first.pi, attacks);
          await detectAll(first.pi, attacks);
          cells = cells.filter((c) => !batch.includes(c));
        }
        skipped.push(...cells.map((c) => `${c.a.id}/${c.u}`));
        if (cells.length) log(`  ${cells.length} full-resolution cell(s) not run within the ${budgetMin}-min budget: ${skipped.join(', ')}`);
      }
      f1.sort(
        (a, b) =>
          ATTACKS.findIndex((x) => x.id === a.attack) - ATTACKS.findIndex((x) => x.id === b.attack) ||
          payloads.indexOf(a.truth[0]!) - payloads.indexOf(b.truth[0]!),
      );

      // ---- the hard leaks: F2' (2-min leaks), F9 (camcorder), F10 (speed, re-edit), F7' (three colluders), F6' (10,000 nulls)
      const w2 = await hardLeaks({
        detect: async (name, file, truth) => detectKeepingFrames(c, name, file, truth),
        codes,
        ff,
        threads,
        width,
        height,
        seconds: SECONDS,
        leakDir,
        viewers: viewers.map((v) => ({ payload: v.payload, mp4: v.mp4 })),
        R,
        log,
        elapsed,
        readingSets: readingSets.map((x) => x.readings),
        key,
        seed,
        slots: layout.slots,
        nullTrials: num('null-trials', 10000),
        want: (part) => want(part),
        keep: args.keep || reuse,
        reuse,
      });

      // ---- report ----------------------------------------------------------------------------------------------
      const attackLabel = (id: string) => ATTACKS.find((a) => a.id === id)?.label ?? id;
      const f1Ok = f1.every((o) => o.verdict === 'correct' && o.trueRank[0] === 1 && o.trueZ[0]! >= Z_THRESHOLD);
      const f1Rows = f1.map((o) => [
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
      const f4Ok = playlistUs <= F4_US && playlistBytes <= F4_BYTES && viewers.every((v) => v.linkedSegments === segments);
      const f5Ok = f5.wallS <= F5_S && f5.correct;
      const f6Ok = f6Accusations === 0 && f6Trials >= F6_TRIALS;
      const f7Ok = !!f7 && [u1, u2].every((u) => f7.accused.includes(u)) && f7.collusion;
      const f3Ok = markPsnr >= F3_PSNR_DB && overheadAB <= F3_OVERHEAD && stepOk;
      const f2Ok = f2Shortest !== undefined && f2Shortest <= F2_TARGET_MIN;
      const f8Ratio = ingest.forensic.wallS / (ingest.plain?.wallS ?? NaN);
      const f8CpuRatio = ingest.forensic.cpuS / (ingest.plain?.cpuS ?? NaN);
      const f8Ok = f8Ratio <= F8_RATIO * 1.25 && sidecarBytes <= F8_SIDECAR;
      const inconsistent = [...f1, ...f2, ...(f7 ? [f7] : []), ...nullReal].filter((o) => !o.consistent).length;
      /** A report section (or summary row) only for a part that ran. */
      const part = <T>(p: Part, items: T[]): T[] => (want(p) ? items : []);

      const lines = [
        '',
        `== bench forensic: A/B forensic watermark, ${SECONDS} s ${width}x${height} ${FPS} fps natural clip with audio ==`,
        formatMachine(ctx.machine),
        `source:  ${path.relative(process.cwd(), clip.path)} (${(clipBytes / 1e6).toFixed(0)} MB, ${mbps(clipBytes, SECONDS).toFixed(1)} Mbit/s)${clip.generatedSeconds ? `, generated in ${clip.generatedSeconds.toFixed(0)} s (one-time)` : ', cached'}`,
        `video:   ${video.id}, ${segments} segments; mark amplitude ${MARK_AMPLITUDE} levels; variants libx264 ${ENGINE_ENCODE.preset} CRF ${ENGINE_ENCODE.crf}; z threshold ${Z_THRESHOLD}`,
        `payloads (seed ${seed}): ${payloads.join(', ')}; attacks: plain ffmpeg -an, libx264 veryfast, -threads ${threads}; full-resolution attacks: ${!want('f1') ? 'not run' : fullAttacks === 'all' ? 'every payload' : fullAttacks === 'rotate' ? 'one payload each, in turn' : `one payload each, then the rest within a ${budgetMin}-min budget${skipped.length ? ` (${skipped.length} cells not run for time)` : ' (all run)'}`}`,
        `detection of attacked leaks: detectLeak in-process (the code wmark detect runs); rank = true payload's place among all 65,536 scores`,
        ...(only ? [`parts run (--only): ${PARTS.filter((p) => only.has(p)).join(', ')}; the rest were skipped`] : []),
        '',
        ...part('f1', [
          '-- F1: attack x payload (full 5-min leaks) --',
          table(['attack', 'payload', 'leak', 'segs read', 'bit errors', 'soft mark', 'z (true)', 'rank', 'best', 'gap', 'verdict'], f1Rows),
          `(soft mark = mean of reading x codeword bit, 1.0 = the full mark; z tops out near sqrt(segments read) = ${fmt(Math.sqrt(segments))} for a full leak: it counts agreeing bits, not their strength)`,
          '',
          table(['attack \\ payload', ...payloads.map(String)], matrix),
          `F1 ${verdictOk(f1Ok)}: ${f1.filter((o) => o.verdict === 'correct').length}/${f1.length} leaks name the right viewer (rank 1, z >= ${Z_THRESHOLD}); min z ${fmt(Math.min(...f1.map((o) => o.trueZ[0]!)))}; wrong accusations ${f1.filter((o) => o.verdict === 'wrong').length}`,
          '',
        ]),
        ...part('f2', [
          '-- F2: shortest contiguous leak identified (CRF 30 + 0.5x, random start) --',
          table(
            ['leak min', 'start s', 'segs read', 'z ceiling', 'bit errors', 'soft mark', 'z (true)', 'rank', 'verdict'],
            f2.map((o) => [
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
          `(z ceiling ~ sqrt(segments read): ${Z_THRESHOLD} needs at least ${Math.ceil(Z_THRESHOLD ** 2)} segments read, i.e. ${fmt((Math.ceil(Z_THRESHOLD ** 2) * 4) / 60, 1)} min of 4-s segments plus the partial ones at the ends)`,
          `F2 ${verdictOk(f2Ok)}: shortest identified ${f2Shortest !== undefined ? `${f2Shortest} min` : 'none'} (target <= ${F2_TARGET_MIN} min)`,
          '',
        ]),
        ...part('f3', [
          `-- F3: mark quality and bitrate (${f3Rows.length} sampled segments; viewer ${payloads[0]} for the edges) --`,
          table(
            [
              'segment',
              'mark PSNR-Y',
              '(computed)',
              'A bytes',
              'B bytes',
              'clean bytes',
              'A/clean',
              'B/clean',
              'PSNR A vs clean',
              'A vs working',
              'clean vs working',
            ],
            f3Rows.map((r) => [
              String(r.k),
              r.markPsnrY,
              r.markPsnrCalc,
              String(r.aBytes),
              String(r.bBytes),
              String(r.cleanBytes),
              `${fmt((r.aBytes / r.cleanBytes - 1) * 100)} %`,
              `${fmt((r.bBytes / r.cleanBytes - 1) * 100)} %`,
              r.aVsClean,
              r.aVsWorking,
              r.cleanVsWorking,
            ]),
          ),
          table(
            [
              'edge',
              'viewer |dY| at edge',
              'clean |dY| at edge',
              'ratio',
              'viewer |dY| inside',
              'cell step mean',
              'cell step max',
              'by design mean',
              'by design max',
            ],
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
          `mark PSNR-Y (the mark alone, pre-encode) ${fmt(markPsnr)} dB (computed from the pattern frames ${fmt(markPsnrCalc)} dB; without the dither ${fmt(markPsnrNoDither)} dB; target >= ${F3_PSNR_DB})`,
          `delivered PSNR-Y vs the clean working copy (CRF 18): variant A ${fmt(median(f3Rows.map((r) => r.aVsWorking)))} dB, clean re-encode at the same settings ${fmt(median(f3Rows.map((r) => r.cleanVsWorking)))} dB; variant A vs that clean re-encode ${fmt(median(f3Rows.map((r) => r.aVsClean)))} dB (medians)`,
          `bitrate overhead vs the clean re-encode (video bytes): A ${fmt(overheadA * 100)} %, B ${fmt(overheadB * 100)} %, A+B ${fmt(overheadAB * 100)} % (target <= ${F3_OVERHEAD * 100} %)`,
          `  (clean re-encode = the working segment through the same x264 settings; the variant pipeline with an all-grey pattern gives a bit-identical stream: ${baselineIdentical === null ? 'not checked' : baselineIdentical ? 'yes' : 'NO'})`,
          `segment edges: viewer/clean |dY| at the edge ${fmt(edgeRatio, 3)} (median; limit 1.10), i.e. +${fmt(edgeExtra, 3)} levels on ${fmt(median(edges.map((e) => e.cleanEdge)))} (keyframe + motion), vs ${fmt(median(edges.map((e) => e.viewerInside)))} between ordinary consecutive frames`,
          `  low-frequency step per pattern cell (viewer minus clean change): mean ${fmt(stepMean)}, max ${fmt(stepMax)} levels; by design (a x pattern change) mean ${fmt(designMean)}, max ${fmt(designMax)}`,
          `F3 ${verdictOk(f3Ok)}: PSNR ${verdictOk(markPsnr >= F3_PSNR_DB)}, overhead ${verdictOk(overheadAB <= F3_OVERHEAD)}, edges ${stepOk ? 'no visible step' : 'STEP'}`,
          '',
        ]),
        ...part('f4', [
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
          `playlist generation in a child process (writeMediaPlaylist, ${segments} segments): ${fmt(playlistUs, 1)} us, ${playlistBytes} bytes; with the viewer's codeword computed and mapped: ${fmt(playlistCodeUs, 1)} us`,
          `F4 ${verdictOk(f4Ok)}: no encode (every segment a hard link to a variant file: ${viewers.every((v) => v.linkedSegments === segments) ? 'yes' : 'NO'}), ${fmt(playlistUs, 1)} us <= ${F4_US} us, ${playlistBytes} B <= ${F4_BYTES} B; the CLI call itself costs ${fmt(median(viewers.map((v) => v.m3u8.wallS)))} s (process start, database)`,
          '',
        ]),
        ...part('f5', [
          '-- F5: wmark detect, end to end --',
          `leak: viewer ${payloads[0]}'s full copy (${(f5.bytes / 1e6).toFixed(0)} MB, ${mbps(f5.bytes, f5.seconds).toFixed(1)} Mbit/s, ${width}x${height}, ${fmt(f5.seconds, 1)} s)`,
          `wall ${fmt(f5.wallS)} s, cpu ${fmt(f5.cpuS)} s (engine's own elapsed ${fmt(f5.engineElapsedS)} s; other load ${fmt(f5.otherCores)} cores); correct: ${f5.correct}, z ${fmt(f5.z)}`,
          `in-process stages on the full-resolution attacked leaks (median s): ${Object.entries(stageMedians)
            .map(([s, v]) => `${s} ${fmt(v)}`)
            .join(
              ', ',
            )}; downscaled leaks: median ${fmt(median(f1.filter((o) => ATTACKS.find((a) => a.id === o.attack)!.downscaled).map((o) => o.detectS)))} s`,
          `F5 ${verdictOk(f5Ok)}: ${fmt(f5.wallS)} s (target <= ${F5_S} s)`,
          '',
        ]),
        ...part('f6', [
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
                String(realNullAccusations),
                String(nullReal.filter((o) => o.collusion).length),
                Math.max(...nullReal.map((o) => o.bestZ)),
                String(nullReal.filter((o) => o.bestZ >= 5).length),
                '-',
              ],
              [
                `readings of ${readingSets.length} copies x ${nullCodebooks} other titles' codebooks`,
                String(codebookTrials.trials),
                String(codebookTrials.accusations),
                String(codebookTrials.collusionFlags),
                codebookTrials.maxZ,
                String(codebookTrials.over5),
                codebookTrials.seconds,
              ],
              [
                'noise readings vs this title',
                String(noiseTrials.trials),
                String(noiseTrials.accusations),
                String(noiseTrials.collusionFlags),
                noiseTrials.maxZ,
                String(noiseTrials.over5),
                noiseTrials.seconds,
              ],
            ],
          ),
          `F6 ${verdictOk(f6Ok)}: ${f6Accusations} accusations in ${f6Trials} null trials (target 0 of ${F6_TRIALS})`,
          '',
        ]),
        ...part('f7', [
          '-- F7: two viewers averaged --',
          `copies of ${u1} and ${u2} averaged (blend=all_mode=average), re-encoded ${collusionScale === 1 ? 'at full size' : `at ${collusionScale}x`}, CRF 23: ${f7?.segmentsRead} segments read`,
          `accused ${f7?.accused.join(', ') || 'nobody'}; collusion flagged: ${f7?.collusion}; z of ${u1} ${fmt(f7?.trueZ[0] ?? NaN)} (rank ${f7?.trueRank[0]}), of ${u2} ${fmt(f7?.trueZ[1] ?? NaN)} (rank ${f7?.trueRank[1]})`,
          `F7 ${verdictOk(f7Ok)}`,
          '',
        ]),
        ...part('f8', [
          '-- F8: ingest cost --',
          table(
            ['ingest', 'wall s', 'cpu s', 'segment bytes (MB)', 'other load (cores)'],
            [
              ['plain', ingest.plain?.wallS ?? NaN, ingest.plain?.cpuS ?? NaN, plainWorkingBytes / 1e6, ingest.plain?.otherCores ?? NaN],
              [
                `--forensic (${layoutChoice})`,
                ingest.forensic.wallS,
                ingest.forensic.cpuS,
                (workingBytes + variantBytes) / 1e6,
                ingest.forensic.otherCores ?? NaN,
              ],
            ],
          ),
          `ratio forensic/plain: wall ${fmt(f8Ratio)}, cpu ${fmt(f8CpuRatio)} (target about ${F8_RATIO}: met up to ${fmt(F8_RATIO * 1.25)}); sidecar ${(sidecarBytes / 1e6).toFixed(2)} MB (target <= 5 MB); variants A+B ${(variantBytes / 1e6).toFixed(0)} MB on disk${ingest.reused ? ' [ingests reused from an earlier run]' : ''}`,
          `F8 ${verdictOk(f8Ok)}`,
          '',
        ]),
        ...w2.lines,
        '',
        `-- summary (forensic layout: ${layoutChoice}) --`,
        table(
          ['target', 'result', 'measured'],
          [
            ...part('f1', [
              [
                'F1 attacks',
                verdictOk(f1Ok),
                `${f1.filter((o) => o.verdict === 'correct').length}/${f1.length} correct, min z ${fmt(Math.min(...f1.map((o) => o.trueZ[0]!)))}`,
              ],
            ]),
            ...part('f2', [['F2 short leak', verdictOk(f2Ok), `shortest identified ${f2Shortest ?? 'none'} min`]]),
            ...part('f3', [['F3 quality', verdictOk(f3Ok), `mark ${fmt(markPsnr)} dB, overhead ${fmt(overheadAB * 100)} %, edges ${stepOk ? 'ok' : 'step'}`]]),
            ...part('f4', [['F4 new viewer', verdictOk(f4Ok), `${fmt(playlistUs, 1)} us, ${playlistBytes} B, no encode`]]),
            ...part('f5', [['F5 detect time', verdictOk(f5Ok), `${fmt(f5.wallS)} s`]]),
            ...part('f6', [['F6 false accusations', verdictOk(f6Ok), `${f6Accusations}/${f6Trials}`]]),
            ...part('f7', [['F7 collusion', verdictOk(f7Ok), `accused ${f7?.accused.join(', ') || 'nobody'}, flagged ${f7?.collusion}`]]),
            ...part('f8', [['F8 ingest', verdictOk(f8Ok), `x${fmt(f8Ratio)} wall, sidecar ${(sidecarBytes / 1e6).toFixed(2)} MB`]]),
            ...w2.summary,
          ],
        ),
        `bench self-check: the bench's scoring of detectLeak's readings disagreed with detectLeak ${inconsistent} time(s); suite time ${elapsed()}`,
        '',
      ];
      process.stdout.write(`${lines.join('\n')}\n`);

      const strip = (o: LeakOutcome) => ({
        ...o,
        readings: undefined,
        readingsSummary: { count: o.readings.length, values: o.readings.map((r) => Number(r.value.toFixed(4))) },
      });
      const result = {
        suite: 'forensic',
        date: new Date().toISOString(),
        machine: ctx.machine,
        options: {
          layout: layoutChoice,
          payloads: payloadCount,
          height,
          width,
          threads,
          seed,
          nullCodebooks,
          nullNoise,
          f3Samples,
          fullAttacks,
          budgetMin,
          collusionScale,
          rawNull,
          only: only ? [...only] : 'all',
        },
        source: { ...clip, bytes: clipBytes },
        video: { id: video.id, segments, markAmplitude: MARK_AMPLITUDE, threshold: Z_THRESHOLD },
        payloads,
        attacks: ATTACKS.map((a) => ({ id: a.id, label: a.label, filter: a.filter(width, height), crf: a.crf, extra: a.extra ?? [] })),
        f1: { met: f1Ok, leaks: f1.map((o) => ({ attack: o.attack, ...strip(o) })), attackWallS: attackWall, skippedForTime: skipped },
        f2: { met: f2Ok, shortestMinutes: f2Shortest ?? null, leaks: f2.map((o) => ({ minutes: o.minutes, startS: o.startS, ...strip(o) })) },
        f3: {
          met: f3Ok,
          baselineIdentical,
          markPsnrY: markPsnr,
          markPsnrComputed: markPsnrCalc,
          markPsnrNoDither,
          overhead: { a: overheadA, b: overheadB, ab: overheadAB },
          segments: f3Rows,
          edges,
          edgeExtra,
          edgeRatio,
          stepMax,
          stepMean,
          designMax,
          designMean,
          stepOk,
        },
        f4: {
          met: f4Ok,
          playlistUs,
          playlistWithCodewordUs: playlistCodeUs,
          playlistBytes,
          samplesUs: viewerTiming.samplesUs,
          samplesWithCodewordUs: viewerTiming.samplesWithCodewordUs,
          viewers,
        },
        f5: { met: f5Ok, ...f5, stageMedians },
        f6: { met: f6Ok, trials: f6Trials, accusations: f6Accusations, real: nullReal.map(strip), codebookTrials, noiseTrials, unmarkedRms },
        f7: f7 ? { met: f7Ok, ...strip(f7) } : null,
        hardLeaks: w2.json,
        f8: { met: f8Ok, ingest, ratioWall: f8Ratio, ratioCpu: f8CpuRatio, sidecarBytes, variantBytes, workingBytes, plainWorkingBytes },
        codebookSeconds: codebookS,
        inconsistent,
        suiteSeconds: (performance.now() - suiteT0) / 1000,
      };
      return result;
    } finally {
      engine.close();
      await rm(cwd, { recursive: true, force: true });
      if (!args.keep && !reuse) await rm(runDir, { recursive: true, force: true });
      else log(`kept working files in ${runDir}`);
    }
  },
};
