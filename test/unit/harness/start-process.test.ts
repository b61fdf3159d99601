// The harness's one way to start a process: ready on a line or a probe, and when it is not (it died, the deadline
// passed, it could not run), an error naming the command, how it ended and what it printed last; stop() escalates.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../harness/fixtures.js';
import { commandLine, describeExit, keepTail, LineSplitter, notReadyMessage, readyWhat, startProcess } from '../../../harness/start-process.js';

/** `node -e code`, named `tiny`. */
const node = (code: string, more: Partial<Parameters<typeof startProcess>[0]> = {}) =>
  startProcess({ name: 'tiny', command: process.execPath, args: ['-e', code], ...more });

describe('the pure parts', () => {
  it('keeps the last characters of a text', () => {
    expect(keepTail('abcdef', 4)).toBe('cdef');
    expect(keepTail('abc', 4)).toBe('abc');
    expect(keepTail('abc', Number.POSITIVE_INFINITY)).toBe('abc');
  });

  it('splits chunks into complete lines, holding a partial line until it ends', () => {
    const lines = new LineSplitter();
    expect(lines.push('one\ntw')).toEqual(['one']);
    expect(lines.push('o')).toEqual([]);
    expect(lines.push('\r\nthree\n\nfour')).toEqual(['two', 'three', '']);
  });

  it('writes a command line as a reader would type it', () => {
    expect(commandLine('/usr/bin/node', ['-e', "console.log('hi there')", '--port=80'])).toBe(`/usr/bin/node -e 'console.log('\\''hi there'\\'')' --port=80`);
  });

  it('says how a process ended and what it waited for', () => {
    expect(describeExit({ code: 3, signal: null })).toBe('exited with code 3');
    expect(describeExit({ code: null, signal: 'SIGKILL' })).toBe('was killed by SIGKILL');
    expect(readyWhat({ line: /ready/ })).toBe('a line matching /ready/ on stdout');
    expect(readyWhat({ line: /ready/, stream: 'either' })).toBe('a line matching /ready/ on stdout or stderr');
    expect(readyWhat({ probe: async () => true, everyMs: 10, what: 'its socket' })).toBe('its socket');
  });

  it('quotes the last 40 lines of the output in a failure message, or says it printed nothing', () => {
    const output = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n');
    const message = notReadyMessage({ name: 'tiny', command: 'node x.js', why: 'exited with code 1 before it was ready', waitingFor: 'its URL', output });
    const lines = message.split('\n');
    expect(lines.slice(0, 3)).toEqual(['tiny exited with code 1 before it was ready (waiting for its URL)', '  $ node x.js', '--- its last output:']);
    expect(lines.slice(3)).toEqual(Array.from({ length: 40 }, (_, i) => `line ${60 + i}`));
    expect(notReadyMessage({ name: 'tiny', command: 'node', why: 'was not ready within 1 s', output: '' })).toBe(
      'tiny was not ready within 1 s\n  $ node\n--- it printed nothing',
    );
  });
});

describe('startProcess', () => {
  it('is ready on the first line that matches, written in pieces, and hands back its groups', async () => {
    const p = node("process.stdout.write('listening on http://127'); setTimeout(() => console.log('.0.0.1:4321'), 100); setInterval(() => {}, 1000);", {
      ready: { line: /^listening on (http:\S+)$/ },
      timeoutMs: 10_000,
    });
    expect((await p.ready)[1]).toBe('http://127.0.0.1:4321');
    expect(p.stdout()).toBe('listening on http://127.0.0.1:4321\n');
    expect(await p.stop()).toEqual({ code: null, signal: 'SIGTERM' });
  });

  it('reads the ready line from stderr only when told to', async () => {
    const code = "console.error('ready'); setTimeout(() => console.log('ready'), 300); setInterval(() => {}, 1000);";
    const either = node(code, { ready: { line: /^ready$/, stream: 'either' }, timeoutMs: 10_000 });
    await either.ready;
    expect(either.stdout()).toBe('');
    const stdout = node(code, { ready: { line: /^ready$/ }, timeoutMs: 10_000 });
    await stdout.ready;
    expect(stdout.stderr()).toBe('ready\n');
    await Promise.all([either.stop(), stdout.stop()]);
  });

  it('rejects when the process dies before it is ready, with its command, exit code and last output', async () => {
    const p = node("for (let i = 0; i < 100; i++) console.error('log line ' + i); process.exit(3);", { ready: { line: /^ready$/ }, timeoutMs: 10_000 });
    const error = (await p.ready.catch((e: Error) => e)) as Error;
    expect(error.message).toContain('tiny exited with code 3 before it was ready (waiting for a line matching /^ready$/ on stdout)');
    expect(error.message).toContain(`  $ ${process.execPath} -e 'for (let i`);
    expect(error.message).toContain('log line 99');
    expect(error.message).toContain('log line 60');
    expect(error.message).not.toContain('log line 59\n');
    expect(await p.exited).toEqual({ code: 3, signal: null });
  });

  it('rejects at the deadline and SIGKILLs the process, which ignored it all', async () => {
    const p = node("process.on('SIGTERM', () => {}); console.log('still starting'); setInterval(() => {}, 1000);", {
      ready: { line: /^ready$/ },
      timeoutMs: 500,
    });
    const error = (await p.ready.catch((e: Error) => e)) as Error;
    expect(error.message).toMatch(/^tiny was not ready within 0\.5 s \(waiting for a line matching/);
    expect(error.message).toContain('--- its last output:\nstill starting');
    expect(await p.exited).toEqual({ code: null, signal: 'SIGKILL' });
  });

  it('is ready when a probe answers: here, a file appearing', async () => {
    const file = path.join(tempDir('start-process'), 'up');
    const p = node(`setTimeout(() => require('fs').writeFileSync(${JSON.stringify(file)}, 'up'), 200); setInterval(() => {}, 1000);`, {
      ready: { probe: async () => existsSync(file), everyMs: 20, what: 'its file' },
      timeoutMs: 10_000,
    });
    expect(await p.ready).toEqual([]);
    expect(existsSync(file)).toBe(true);
    await p.stop();
  });

  it('stop() escalates to SIGKILL when the process outlives the grace', async () => {
    const p = node("process.on('SIGTERM', () => {}); console.log('ready'); setInterval(() => {}, 1000);", {
      ready: { line: /^ready$/ },
      stop: { graceMs: 300 },
    });
    await p.ready;
    const t0 = Date.now();
    expect(await p.stop()).toEqual({ code: null, signal: 'SIGKILL' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
  });

  it('stop() of a detached process signals its whole group: what it started ends with it', async () => {
    const p = node(
      "const c = require('child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' }); console.log('child ' + c.pid); setInterval(() => {}, 1000);",
      { ready: { line: /^child (\d+)$/ }, timeoutMs: 10_000, detached: true },
    );
    const grandchild = Number((await p.ready)[1]);
    const alive = () => {
      try {
        process.kill(grandchild, 0);
        return true;
      } catch {
        return false;
      }
    };
    expect(alive()).toBe(true);
    expect(await p.stop()).toEqual({ code: null, signal: 'SIGTERM' });
    const end = Date.now() + 5_000;
    while (alive() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    expect(alive()).toBe(false);
  });

  it('feeds stdin, keeps only the tail of each stream it was told to, and resolves `closed` with all output read', async () => {
    const p = node("let s = ''; process.stdin.on('data', (d) => (s += d)).on('end', () => { console.log('x'.repeat(5000) + s); process.exit(4); });", {
      stdin: 'the end',
      keep: 100,
    });
    expect(await p.closed).toEqual({ code: 4, signal: null });
    expect(p.stdout()).toHaveLength(100);
    expect(p.stdout().endsWith('xthe end\n')).toBe(true);
    expect(p.output()).toBe(p.stdout());
  });

  it('says it cannot run a missing command, with the hint, and `closed` rejects the same way', async () => {
    const dir = tempDir('start-process');
    const missing = path.join(dir, 'no-such-server');
    const p = startProcess({ name: 'no-such-server', command: missing, args: ['--port', '1'], hint: 'install it first', ready: { line: /ready/ } });
    const error = (await p.ready.catch((e: Error) => e)) as Error;
    expect(error.message).toBe(`cannot run no-such-server (install it first): spawn ${missing} ENOENT\n  $ ${missing} --port 1`);
    await expect(p.closed).rejects.toThrow(error.message);
    expect(await p.stop()).toEqual({ code: -2, signal: null });
  });
});
