// Media helpers of the forensic benches: ffmpeg run with its output kept, frames read as grey, a PSNR line, a folder's
// bytes, a file read once to warm the page cache.
import { execFile } from 'node:child_process';
import { createReadStream, existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

/** The nearest even size of at least 2: what x264's 4:2:0 accepts. */
export const even = (v: number) => Math.max(2, Math.round(v / 2) * 2);

/** The forensic benches' x264 output: video only, veryfast, 4:2:0, `threads` threads. */
export const x264 = (crf: number, threads: number) => [
  '-an',
  '-c:v',
  'libx264',
  '-preset',
  'veryfast',
  '-crf',
  String(crf),
  '-pix_fmt',
  'yuv420p',
  '-threads',
  String(threads),
];

/** ffmpeg's quiet start: no banner, no stdin, errors only, outputs overwritten. */

export async function warmRead(file: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const s = createReadStream(file, { highWaterMark: 8 << 20 });
    s.on('data', () => undefined);
    s.on('end', resolve);
    s.on('error', reject);
  });
}

export function dirBytes(dir: string, filter: (name: string) => boolean = () => true): number {
  if (!existsSync(dir)) return 0;
  return readdirSync(dir)
    .filter(filter)
    .reduce((a, f) => a + statSync(path.join(dir, f)).size, 0);
}

export async function ffmpeg(bin: string, args: string[]): Promise<{ stderr: string; stdout: Buffer; wallS: number }> {
  const t0 = performance.now();
  const { stdout, stderr } = await execFileP(bin, args, { maxBuffer: 1024 * 1024 * 1024, encoding: 'buffer' });
  return { stdout: stdout as Buffer, stderr: (stderr as Buffer).toString('utf8'), wallS: (performance.now() - t0) / 1000 };
}

/** Gray frames (full resolution) of one segment file: frame indexes wanted, e.g. [0] or [last]. */
export async function grayFrames(bin: string, file: string, indexes: number[], width: number, height: number): Promise<Uint8Array[]> {
  const select = indexes.map((i) => `eq(n\\,${i})`).join('+');
  const { stdout } = await ffmpeg(bin, [
    '-v',
    'error',
    '-i',
    file,
    '-map',
    '0:v:0',
    '-vf',
    `select='${select}',format=gray`,
    '-vsync',
    '0',
    '-f',
    'rawvideo',
    'pipe:1',
  ]);
  const n = width * height;
  return indexes.map((_, i) => new Uint8Array(stdout.buffer, stdout.byteOffset + i * n, n));
}

export function parsePsnrY(stderr: string): number {
  const m = /PSNR y:(\S+)/.exec(stderr);
  if (!m) throw new Error(`no PSNR line in ffmpeg output:\n${stderr.slice(-1500)}`);
  return m[1] === 'inf' ? Infinity : Number(m[1]);
}
