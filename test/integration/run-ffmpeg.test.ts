// The process runner with real processes: the bundled ffmpeg/ffprobe for output, progress and cancelling, and small
// shell scripts standing in for an ffmpeg that is missing, crashes, or ignores SIGTERM; and the stall watchdog on a
// real filter graph that deadlocks and a real input that never delivers.
import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../harness/fixtures.js';
import { FFMPEG, FFPROBE } from '../../harness/tools.js';
import { createProcessRunner, FORCE_KILL_AFTER_MS } from '../../src/ffmpeg/run-ffmpeg.js';

const dir = tempDir('runner');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An executable shell script standing in for ffmpeg. */
function fakeFfmpeg(name: string, body: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const runner = createProcessRunner(FFMPEG, FFPROBE);
const TEN_FRAMES = ['-f', 'lavfi', '-i', 'testsrc2=size=64x36:rate=10', '-frames:v', '10', '-f', 'null', '-'];

describe('createProcessRunner', () => {
  it('counts the frames ffmpeg wrote and reports progress as fractions of the duration', async () => {
    const fractions: number[] = [];
    const r = await runner.ffmpeg(TEN_FRAMES, { durationSeconds: 1, onProgress: (f) => fractions.push(f) });
    expect(r.frames).toBe(10);
    expect(fractions.length).toBeGreaterThan(0);
    expect(fractions.every((f) => f >= 0 && f <= 1)).toBe(true);
    // 10 frames at 10 fps end at 1 s: the last report is the whole duration.
    expect(fractions.at(-1)).toBe(1);
  });

  it('returns what ffprobe printed, byte for byte', async () => {
    const r = await runner.ffprobe(['-f', 'lavfi', '-i', 'testsrc2=size=64x36:rate=10', '-show_entries', 'stream=width,height', '-of', 'json']);
    expect(JSON.parse(r.stdout.toString('utf8')).streams[0]).toEqual({ width: 64, height: 36 });
  });

  it("fails with ffmpeg's own reason (the end of its stderr) when it exits non-zero", async () => {
    const missing = path.join(dir, 'no-such-input.mp4');
    await expect(runner.ffmpeg(['-i', missing, '-f', 'null', '-'])).rejects.toMatchObject({
      code: 'FFMPEG_FAILED',
      message: expect.stringMatching(/^ffmpeg exited with code 1: .*No such file or directory/s),
    });
  });

  it('says which binary is missing, with a hint', async () => {
    const broken = createProcessRunner(path.join(dir, 'nowhere', 'ffmpeg'), FFPROBE);
    await expect(broken.ffmpeg(TEN_FRAMES)).rejects.toMatchObject({
      code: 'FFMPEG_NOT_FOUND',
      message: expect.stringContaining('nowhere/ffmpeg'),
      hint: expect.stringContaining('wmark doctor'),
    });
  });

  it('reports a crash (killed by a signal) apart from a failure', async () => {
    const crashing = createProcessRunner(fakeFfmpeg('ffmpeg-segv', 'echo "about to crash" >&2\nkill -SEGV $$'), FFPROBE);
    await expect(crashing.ffmpeg(TEN_FRAMES)).rejects.toMatchObject({ code: 'FFMPEG_CRASHED', message: 'ffmpeg was killed by SIGSEGV: about to crash' });
  });

  it('stops ffmpeg when the signal aborts: CANCELLED, and the process is gone', async () => {
    const pidFile = path.join(dir, 'endless.pid');
    const endless = createProcessRunner(fakeFfmpeg('ffmpeg-endless', `echo $$ > ${pidFile}\nexec ${FFMPEG} "$@"`), FFPROBE);
    const controller = new AbortController();
    const run = endless.ffmpeg(['-re', '-f', 'lavfi', '-i', 'testsrc2=size=64x36:rate=10', '-f', 'null', '-'], { signal: controller.signal });
    await new Promise((r) => setTimeout(r, 400));
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(alive(pid)).toBe(true);
    controller.abort();
    await expect(run).rejects.toMatchObject({ code: 'CANCELLED', message: 'ffmpeg was cancelled' });
    expect(alive(pid)).toBe(false);
  });

  it('kills a process that ignores SIGTERM once FORCE_KILL_AFTER_MS has passed', { timeout: FORCE_KILL_AFTER_MS + 10_000 }, async () => {
    const stubborn = createProcessRunner(fakeFfmpeg('ffmpeg-stubborn', "trap '' TERM\nwhile :; do sleep 0.1; done"), FFPROBE);
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 100);
    const cancelled = stubborn.ffmpeg(['-i', 'x'], { signal: controller.signal });
    await expect(cancelled).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(FORCE_KILL_AFTER_MS);
  });

  it('stops an ffmpeg whose filter graph deadlocks (its reports go on, its frame count does not): FFMPEG_STALLED', {
    timeout: FORCE_KILL_AFTER_MS + 20_000,
  }, async () => {
    // A one-frame input split four ways into blends: ffmpeg 4's scheduler waits forever once that input ends (this
    // hung forensic ingest before its plan gave every blend an input of its own; see wholeVariantArgs).
    const pattern = path.join(dir, 'one-frame.yuv');
    writeFileSync(pattern, Buffer.alloc((64 * 36 * 3) / 2, 128));
    const pidFile = path.join(dir, 'deadlock.pid');
    const watched = createProcessRunner(fakeFfmpeg('ffmpeg-deadlock', `echo $$ > ${pidFile}\nexec ${FFMPEG} "$@"`), FFPROBE, { stallMs: 1500 });
    const blends = [0, 1, 2, 3].map((i) => `[v${i}][p${i}]blend=all_mode=grainmerge[o${i}]`).join(';');
    const started = Date.now();
    const run = watched.ffmpeg([
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=64x36:rate=30:d=4',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'yuv420p',
      '-s',
      '64x36',
      '-i',
      pattern,
      '-filter_complex',
      `[0:v]split=4[v0][v1][v2][v3];[1:v]split=4[p0][p1][p2][p3];${blends}`,
      ...[0, 1, 2, 3].flatMap((i) => ['-map', `[o${i}]`, '-f', 'null', '-']),
    ]);
    await expect(run).rejects.toMatchObject({
      code: 'FFMPEG_STALLED',
      message: expect.stringMatching(/^ffmpeg made no progress for 2 s \(at frame \d+\) and was stopped/),
    });
    expect(Date.now() - started).toBeLessThan(1500 + FORCE_KILL_AFTER_MS + 5000);
    expect(alive(Number(readFileSync(pidFile, 'utf8')))).toBe(false);
  });

  it('stops an ffmpeg blocked before its first frame (an input that never delivers)', { timeout: FORCE_KILL_AFTER_MS + 20_000 }, async () => {
    const fifo = path.join(dir, 'silent.fifo');
    execFileSync('mkfifo', [fifo]);
    const watched = createProcessRunner(FFMPEG, FFPROBE, { stallMs: 1000 });
    await expect(watched.ffmpeg(['-f', 'rawvideo', '-pix_fmt', 'gray', '-s', '8x8', '-i', fifo, '-f', 'null', '-'])).rejects.toMatchObject({
      code: 'FFMPEG_STALLED',
      message: expect.stringMatching(/^ffmpeg made no progress for 1 s \(before its first frame\)/),
    });
  });

  it('times the stall watch by the clock it is given: a clock an hour on stops a silent run at once, not a minute later', async () => {
    const fifo = path.join(dir, 'silent-clocked.fifo');
    execFileSync('mkfifo', [fifo]);
    let offset = 0;
    const watched = createProcessRunner(FFMPEG, FFPROBE, { stallMs: 60_000, now: () => Date.now() + offset });
    const started = Date.now();
    setTimeout(() => (offset = 3_600_000), 200);
    await expect(watched.ffmpeg(['-f', 'rawvideo', '-pix_fmt', 'gray', '-s', '8x8', '-i', fifo, '-f', 'null', '-'])).rejects.toMatchObject({
      code: 'FFMPEG_STALLED',
      message: expect.stringMatching(/^ffmpeg made no progress for 60 s \(before its first frame\)/),
    });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('runs x264 under the same watch: silent past the stall time by its clock, FFMPEG_STALLED; missing, FFMPEG_NOT_FOUND', async () => {
    let offset = 0;
    const watched = createProcessRunner(FFMPEG, FFPROBE, { stallMs: 60_000, now: () => Date.now() + offset });
    const silent = fakeFfmpeg('x264-silent', 'while :; do sleep 0.1; done');
    setTimeout(() => (offset = 3_600_000), 200);
    await expect(watched.x264(silent, ['-o', 'out.264', 'in.y4m'])).rejects.toMatchObject({
      code: 'FFMPEG_STALLED',
      message: expect.stringMatching(/^x264 made no progress for 60 s and was stopped/),
    });
    await expect(watched.x264(path.join(dir, 'nowhere', 'x264'), [])).rejects.toMatchObject({
      code: 'FFMPEG_NOT_FOUND',
      hint: expect.stringMatching(/WMARK_X264/),
    });
  });

  it('leaves a slow run alone while its frames move', async () => {
    const watched = createProcessRunner(FFMPEG, FFPROBE, { stallMs: 1000 });
    // Real time (-re): 25 frames over 2.5 s, a report every 0.5 s, each with more frames.
    const r = await watched.ffmpeg(['-re', '-f', 'lavfi', '-i', 'testsrc2=size=64x36:rate=10', '-frames:v', '25', '-f', 'null', '-']);
    expect(r.frames).toBe(25);
  });
});
