// ffmpeg children end within 2 s of their parent's death: a node process starts a long ffmpeg through the
// process runner and is SIGKILLed (no handler runs); its watchdog pipe closes and the ffmpeg is gone.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REPO } from '../../harness/fixtures.js';
import { waitFor } from '../../harness/serve-helpers.js';
import { startProcess } from '../../harness/start-process.js';
import { FFMPEG, FFPROBE } from '../../harness/tools.js';

const alive = (pid: number) => {
  try {
    // A zombie is dead for our purpose: its state is Z in /proc.
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};
const childrenOf = (pid: number) => readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
const commandOf = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');

describe.skipIf(process.platform !== 'linux')('ffmpeg watchdog', () => {
  it('a SIGKILLed parent takes its running ffmpeg with it within 2 s', async () => {
    const runner = pathToFileURL(path.join(REPO, 'dist', 'ffmpeg', 'run-ffmpeg.js')).href;
    const script = `
      const { createProcessRunner } = await import(${JSON.stringify(runner)});
      const r = createProcessRunner(${JSON.stringify(FFMPEG)}, ${JSON.stringify(FFPROBE)});
      console.log('started');
      await r.ffmpeg(['-re', '-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=5', '-t', '600', '-f', 'null', '-']);`;
    const parent = startProcess({
      name: 'the runner of ffmpeg',
      command: process.execPath,
      args: ['--input-type=module', '-e', script],
      // Its errors in the test's own output, as if inherited.
      onOutput: (text, stream) => stream === 'stderr' && process.stderr.write(text),
    });
    try {
      const ffmpegPid = await waitFor(() => childrenOf(parent.proc.pid!).find((pid) => commandOf(pid)[0] === FFMPEG), 'the ffmpeg child', 15_000, 50);
      // It really runs: still there a moment later.
      await new Promise((r) => setTimeout(r, 300));
      expect(alive(ffmpegPid)).toBe(true);
      const killedAt = Date.now();
      parent.proc.kill('SIGKILL');
      await waitFor(() => (alive(ffmpegPid) ? undefined : true), `ffmpeg ${ffmpegPid} to end`, 2_000, 20);
      expect(Date.now() - killedAt).toBeLessThan(2_000);
    } finally {
      await parent.stop({ signal: 'SIGKILL' });
    }
  });
});
