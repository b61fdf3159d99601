// How serve logs on stderr: JSON lines when stderr is not a terminal (every request, with its id, route pattern,
// status and time), readable lines at a terminal as before (a line per request only with --verbose), --quiet leaving
// out only what is news, and no query string or password in any message.
import { describe, expect, it } from 'vitest';
import type { CliIO } from '../../../src/cli/io.js';
import { Output } from '../../../src/cli/output.js';
import { serveLog } from '../../../src/cli/serve-log.js';

function sink(options: { tty: boolean; quiet?: boolean; verbose?: boolean }) {
  let stderr = '';
  const io = {
    stdout: { write: () => true, isTTY: options.tty },
    stderr: {
      write: (s: string) => {
        stderr += s;
        return true;
      },
      isTTY: options.tty,
      columns: 100,
    },
    env: { NO_COLOR: '1', CI: '1' },
  } as unknown as CliIO;
  const output = new Output(io, { json: false, quiet: options.quiet ?? false, verbose: options.verbose ?? false });
  return { logs: serveLog(io, output, () => Date.UTC(2025, 0, 2, 3, 4, 5)), text: () => stderr };
}

const request = { reqId: 'abc-123', method: 'GET', route: '/2.0/watermark/:videoId/:watermarkId/:file', status: 200, ms: 3 };

describe('serve logs away from a terminal', () => {
  it('are one JSON object per line, requests included, messages scrubbed', () => {
    const s = sink({ tty: false });
    expect(s.logs.json).toBe(true);
    s.logs.log('render farm: tasks go to redis://:pw@farm:6379', { level: 'info' });
    s.logs.logRequest(request);
    s.logs.log('database: lost postgres://wmark:***@db/wmark (connect ECONNREFUSED)', { level: 'warn' });
    const lines = s
      .text()
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      { time: '2025-01-02T03:04:05.000Z', level: 'info', msg: 'render farm: tasks go to redis://:***@farm:6379' },
      { time: '2025-01-02T03:04:05.000Z', level: 'info', msg: `GET ${request.route} 200 3 ms [req abc-123]`, ...request },
      { time: '2025-01-02T03:04:05.000Z', level: 'warn', msg: 'database: lost postgres://wmark:***@db/wmark (connect ECONNREFUSED)' },
    ]);
  });

  it('with --quiet, leave out news but keep warnings and errors', () => {
    const s = sink({ tty: false, quiet: true });
    s.logs.log('resuming 2 unfinished job(s)');
    s.logs.logRequest(request);
    s.logs.logRequest({ ...request, status: 500 });
    s.logs.log('queue: lost redis://farm:6379', { level: 'warn' });
    expect(
      s
        .text()
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).level),
    ).toEqual(['error', 'warn']);
  });
});

describe('serve logs at a terminal', () => {
  it('are the readable lines they always were, without a line per request', () => {
    const s = sink({ tty: true });
    expect(s.logs.json).toBe(false);
    s.logs.log('database: postgres://wmark:***@db/wmark answers again after 7 s', { level: 'info' });
    s.logs.logRequest(request);
    expect(s.text()).toBe('database: postgres://wmark:***@db/wmark answers again after 7 s\n');
  });

  it('with --verbose, add a line per request', () => {
    const s = sink({ tty: true, verbose: true });
    s.logs.logRequest(request);
    expect(s.text()).toBe(`GET ${request.route} 200 3 ms [req abc-123]\n`);
  });
});
