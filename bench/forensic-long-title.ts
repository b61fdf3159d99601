// The forensic-long bench's title: a feature-length film generated small and cheap (scenes of random cloud texture,
// cut into panning shots that never repeat), cached under bench/out/forensic-long.
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { FFMPEG_QUIET } from './lib/ffmpeg-args.js';
import { even, ffmpeg } from './lib/forensic-media.js';
import { OUT_DIR, type SuiteContext } from './lib/suite.js';

/**
 * One generated scene: four layers of random texture (very coarse, coarse with colour, medium, fine; each its own
 * seeded noise, scaled up smooth) drawn once at 3x the frame, then shots of 3-8 s: each cut jumps to a pseudo-random
 * place of the texture and pans from there at its own speed (pan and cut follow from the shot number and the seed).
 * A new seed is a new picture, so scenes never repeat each other, and shots inside a scene show other places.
 */
function sceneGraph(width: number, height: number, fps: number, seed: number): string {
  const tw = even(width * 3),
    th = even(height * 3);
  const cw = even(width * 2),
    ch = even(height * 2);
  const layer = (cells: number, s: number, chroma: number) =>
    `color=c=0x808080:s=${even(tw / cells)}x${even(th / cells)}:d=0.04,format=yuv444p,` +
    `noise=c0s=100:c0_seed=${s}:c1s=${chroma}:c1_seed=${s + 1}:c2s=${chroma}:c2_seed=${s + 2},scale=${tw}:${th}:flags=bicubic`;
  // Shot k(t) = floor(t/5 + 0.6 sin(t/9)): monotonic, shots 3.75-7.5 s. hash(k) in [0, 1) from the shot number.
  const shot = 'st(0\\,floor(t/5+0.6*sin(t/9)))';
  const hash = (slot: number, a: number, b: number) =>
    `st(${slot}\\,sin(ld(0)*${a}+${(seed * b) % 1000})*43758.5453);st(${slot}\\,ld(${slot})-floor(ld(${slot})))`;
  const pan = (amp: number, a: number, b: number, c: number, d: number) =>
    `${shot};${hash(1, a, b)};${hash(2, c, d)};${amp}+${amp - 4}*sin(6.2832*ld(1)+(ld(2)-0.5)*0.6*t)`;
  return (
    `${layer(160, seed * 10 + 1, 0)}[l0];${layer(40, seed * 10 + 2, 30)}[l1];${layer(10, seed * 10 + 5, 0)}[l2];${layer(2.5, seed * 10 + 8, 0)}[l3];` +
    `[l0][l1]blend=all_expr='A*0.6+B*0.4'[a1];[a1][l2]blend=c0_expr='A*0.8+B*0.2':c1_expr=A:c2_expr=A[a2];` +
    `[a2][l3]blend=c0_expr='A*0.9+B*0.1':c1_expr=A:c2_expr=A,loop=loop=-1:size=1:start=0,setpts=N/${fps}/TB,` +
    `crop=${cw}:${ch}:x='${pan((tw - cw) / 2, 12.9898, 0.731, 39.3468, 0.173)}':y='${pan((th - ch) / 2, 78.233, 0.377, 93.989, 0.519)}',` +
    `scale=${width}:${height}:flags=bicubic,noise=alls=3:allf=t,setsar=1,format=yuv420p[v]`
  );
}

type TitleSpec = { width: number; height: number; fps: number; minutes: number; sceneMinutes: number };

/** ffmpeg's arguments for scene `i` (its own seed), `seconds` long, with a beeping tone for audio. */
function sceneArgs(o: TitleSpec, i: number, seconds: number, out: string): string[] {
  const audio = ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:beep_factor=4'];
  const video = ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-threads', '1', '-pix_fmt', 'yuv420p'];
  const graph = sceneGraph(o.width, o.height, o.fps, 1000 + i);
  return [
    ...FFMPEG_QUIET,
    ...audio,
    '-filter_complex',
    graph,
    '-map',
    '[v]',
    '-map',
    '0:a',
    '-t',
    String(seconds),
    '-r',
    String(o.fps),
    ...video,
    '-c:a',
    'aac',
    '-b:a',
    '48k',
    out,
  ];
}

/** Every scene not made yet, two ffmpegs at a time (each encodes with one thread). */
async function generateScenes(ctx: SuiteContext, o: TitleSpec, scenes: number, sceneFile: (i: number) => string): Promise<void> {
  let next = 0,
    done = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= scenes) return;
      const seconds = Math.min(o.sceneMinutes * 60, o.minutes * 60 - i * o.sceneMinutes * 60);
      if (!existsSync(sceneFile(i))) {
        const tmp = `${sceneFile(i)}.tmp.mp4`;
        await ffmpeg(ctx.tools.ffmpeg.path, sceneArgs(o, i, seconds, tmp));
        await rename(tmp, sceneFile(i));
      }
      ctx.log(`  scene ${++done}/${scenes}`);
    }
  };
  await Promise.all([worker(), worker()]);
}

/** The long title, cached: scenes generated two at a time, then joined by stream copy. */
export async function longTitle(ctx: SuiteContext, o: TitleSpec): Promise<{ file: string; generatedS: number; scenes: number }> {
  const stem = `title-v2-${o.width}x${o.height}-${o.minutes}min-${o.fps}fps-scenes${o.sceneMinutes}`;
  const dir = path.join(OUT_DIR, 'forensic-long');
  const file = path.join(dir, `${stem}.mp4`);
  const scenes = Math.ceil(o.minutes / o.sceneMinutes);
  if (existsSync(file)) return { file, generatedS: 0, scenes };
  const parts = path.join(dir, `${stem}.parts`);
  await mkdir(parts, { recursive: true });
  ctx.log(
    `generating the ${o.minutes}-min ${o.width}x${o.height} title: ${scenes} scenes of ${o.sceneMinutes} min (one-time cost, cached as ${path.relative(process.cwd(), file)}) ...`,
  );
  const t0 = performance.now();
  const sceneFile = (i: number) => path.join(parts, `scene-${String(i).padStart(3, '0')}.mp4`);
  await generateScenes(ctx, o, scenes, sceneFile);
  const list = path.join(parts, 'list.txt');
  await writeFile(list, Array.from({ length: scenes }, (_, i) => `file '${sceneFile(i)}'`).join('\n'));
  await ffmpeg(ctx.tools.ffmpeg.path, [...FFMPEG_QUIET, '-f', 'concat', '-safe', '0', '-i', list, '-c', 'copy', '-movflags', '+faststart', `${file}.tmp.mp4`]);
  await rename(`${file}.tmp.mp4`, file);
  await rm(parts, { recursive: true, force: true });
  const generatedS = (performance.now() - t0) / 1000;
  ctx.log(`  generated in ${generatedS.toFixed(0)} s`);
  return { file, generatedS, scenes };
}
