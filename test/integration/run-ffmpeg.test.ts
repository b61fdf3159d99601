// The process runner with real processes: the bundled ffmpeg/ffprobe for output, progress and cancelling, and small
// shell scripts standing in for an ffmpeg that is missing, crashes, or ignores SIGTERM.
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createProcessRunner, FORCE_KILL_AFTER_MS } from '../../src/ffmpeg/run-ffmpeg.js';
import { tempDir } from '../helpers/fixtures.js';
import { FFMPEG, FFPROBE } from '../helpers/tools.js';

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
    const r = await runner.ffmpeg(TEN_FRAMES, { countFrames: true, durationSeconds: 1, onProgress: (f) => fractions.push(f) });
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
    await expect(broken.ffmpeg(TEN_FRAMES)).rejects.toMatchObject({ code: 'FFMPEG_NOT_FOUND', message: expect.stringContaining('nowhere/ffmpeg'), hint: expect.stringContaining('wmark doctor') });
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
});
