// The harness's one process supervisor: the polite signal first, SIGKILL after the grace, at once for a process gone.
import { describe, expect, it } from 'vitest';
import { startProcess } from '../../../harness/start-process.js';
import { stopProcess } from '../../../harness/stop-process.js';

/** A node child that prints `ready` once its handlers are set; `ignore` makes it shrug off SIGTERM and SIGINT. */
async function child(ignore: boolean) {
  const code = `${ignore ? "process.on('SIGTERM', () => {}); process.on('SIGINT', () => {});" : ''} console.log('ready'); setInterval(() => {}, 1000);`;
  const started = startProcess({ name: 'tiny', command: process.execPath, args: ['-e', code], ready: { line: /^ready$/ }, timeoutMs: 10_000 });
  await started.ready;
  return started.proc;
}

describe('stopProcess', () => {
  it('sends the signal and resolves with how the process ended', async () => {
    const proc = await child(false);
    expect(await stopProcess(proc, { signal: 'SIGINT', graceMs: 10_000 })).toEqual({ code: null, signal: 'SIGINT' });
  });

  it('escalates to SIGKILL when the process outlives the grace', async () => {
    const proc = await child(true);
    const t0 = Date.now();
    expect(await stopProcess(proc, { graceMs: 300 })).toEqual({ code: null, signal: 'SIGKILL' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
  });

  it('returns at once for no process or one that has already exited', async () => {
    expect(await stopProcess(undefined, { graceMs: 1 })).toEqual({ code: null, signal: null });
    const proc = await child(false);
    proc.kill('SIGTERM');
    await new Promise((resolve) => proc.once('exit', resolve));
    expect(await stopProcess(proc, { graceMs: 1 })).toEqual({ code: null, signal: 'SIGTERM' });
  });
});
