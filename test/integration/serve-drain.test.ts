// The drain before a stop (README.md, "Rolling restarts"): /readyz answers 503 SHUTTING_DOWN at once, every request
// is still answered for the drain period, each answer closes its connection, then the listener closes and a request
// in flight still gets its answer; a spawned `wmark serve --drain-seconds` does the same on SIGTERM, and a second
// SIGTERM during the drain exits 130 at once.
import { rmSync } from 'node:fs';
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { tempDir } from '../../harness/fixtures.js';
import { call, freePort, type SpawnedServe, serveEngine, spawnServe, waitFor } from '../../harness/serve-helpers.js';
import { expectError } from '../helpers/serve-in-tests.js';

/** One kept-alive HTTP/1.1 connection, written to by hand: what each answer said, and whether the server closed it. */
function connection(url: string) {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  let received = '';
  let closed = false;
  socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
  socket.on('error', () => {});
  socket.on('close', () => (closed = true));
  const connected = new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return {
    connected,
    closed: () => closed,
    /** Sends `head` (and `body`, when given) and waits for a whole answer; its status line and headers, lower-cased. */
    async ask(head: string, body = ''): Promise<{ status: number; headers: Record<string, string>; body: string }> {
      const from = received.length;
      socket.write(head + body);
      const text = await waitFor(
        () => {
          const t = received.slice(from);
          const end = t.indexOf('\r\n\r\n');
          if (end < 0) return undefined;
          const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(t.slice(0, end))?.[1] ?? 0);
          return t.length >= end + 4 + length ? t : undefined;
        },
        `an answer to ${head.split('\r\n')[0]}`,
      );
      const [statusLine, ...lines] = text.slice(0, text.indexOf('\r\n\r\n')).split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      return { status: Number(statusLine!.split(' ')[1]), headers, body: text.slice(text.indexOf('\r\n\r\n') + 4) };
    },
    write: (text: string) => socket.write(text),
    destroy: () => socket.destroy(),
  };
}

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: wmark.test\r\n\r\n`;
/** Whether a new connection to `url` is refused (the listener is closed). */
const refused = (url: string) =>
  new Promise<boolean>((resolve) => {
    const { hostname, port } = new URL(url);
    const s = net.connect(Number(port), hostname);
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'));
  });

describe('close with a drain (a real socket, in-process)', () => {
  let engine: TestEngine | undefined;
  afterAll(async () => {
    await engine?.dispose();
  });

  it('answers /readyz 503 SHUTTING_DOWN at once, keeps answering with Connection: close, then closes the listener and still answers the request in flight', async () => {
    engine = await testEngine();
    const s = await serveEngine(engine);
    // Before: ready, and a kept-alive connection stays open after its answer.
    expect((await call(s.url, 'GET', '/readyz')).status).toBe(200);
    const kept = connection(s.url);
    await kept.connected;
    const before = await kept.ask(get('/healthz'));
    expect([before.status, before.headers.connection]).toEqual([200, 'keep-alive']);
    // A request that is in flight through the whole drain: its headers now, its body only once the listener is closed.
    const inFlight = connection(s.url);
    await inFlight.connected;
    const body = JSON.stringify({ key: 'no-such-video', settings: [{ content: 'in flight' }] });
    inFlight.write(`POST /2.0/watermark HTTP/1.1\r\nHost: wmark.test\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n`);
    for (const [k, v] of Object.entries(s.v2)) inFlight.write(`${k}: ${v}\r\n`);
    inFlight.write('\r\n');

    const drainMs = 1_500;
    const started = Date.now();
    const closed = s.close({ drainMs, timeoutMs: 5_000 });

    // At once: not ready, with the catalogued code, a message that says why, and Retry-After.
    const ready = await call(s.url, 'GET', '/readyz');
    expectError(ready, 503, 'SHUTTING_DOWN');
    expect(ready.json).toMatchObject({ ready: false, dependencies: [] });
    expect(ready.json.message).toMatch(/stopping/);
    expect(ready.headers.get('retry-after')).toBe('5');
    expect((await call(s.url, 'HEAD', '/readyz')).status).toBe(503);
    // Everything else is answered as usual, and each answer ends its connection: the kept-alive one too.
    expect((await call(s.url, 'GET', '/healthz')).json).toEqual({ ok: true });
    expect((await call(s.url, 'GET', '/2.0/videos', { headers: s.v2 })).status).toBe(200);
    const during = await kept.ask(get('/healthz'));
    expect([during.status, during.headers.connection]).toEqual([200, 'close']);
    await waitFor(() => kept.closed() || undefined, 'the server to close the kept-alive connection after its answer', 2_000, 20);
    const fresh = connection(s.url);
    await fresh.connected;
    const answered = await fresh.ask(get('/2.0/videos'));
    expect([answered.status, answered.headers.connection]).toEqual([401, 'close']);
    expect(Date.now() - started).toBeLessThan(drainMs);

    // Then the listener closes: a new connection is refused, while the request in flight is still answered.
    await waitFor(async () => (await refused(s.url)) || undefined, 'the listener to close', drainMs + 3_000, 50);
    expect(Date.now() - started).toBeGreaterThanOrEqual(drainMs - 50);
    const last = await inFlight.ask('', body);
    expect([last.status, JSON.parse(last.body).code, last.headers.connection]).toEqual([404, 'VIDEO_NOT_FOUND', 'close']);
    await closed;
    expect(Date.now() - started).toBeLessThan(drainMs + 5_000);
    for (const c of [kept, inFlight, fresh]) c.destroy();
  });
});

describe('wmark serve --drain-seconds (spawned)', () => {
  const spawned: SpawnedServe[] = [];
  const dir = tempDir('serve-drain');
  afterAll(async () => {
    for (const p of spawned) {
      p.kill('SIGKILL');
      await p.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (drainSeconds: number) => {
    const proc = spawnServe(dir, ['--port', String(await freePort()), '--workers', '1', '--drain-seconds', String(drainSeconds)]);
    spawned.push(proc);
    return { proc, url: await proc.url };
  };

  it('on SIGTERM drains for the given seconds (/readyz 503, requests answered), then stops listening and exits 0', async () => {
    const { proc, url } = await start(2);
    expect((await call(url, 'GET', '/readyz')).status).toBe(200);
    const signalled = Date.now();
    proc.kill('SIGTERM');
    await waitFor(async () => ((await call(url, 'GET', '/readyz')).status === 503 ? true : undefined), '/readyz to answer 503', 1_000, 20);
    expect((await call(url, 'GET', '/readyz')).json.code).toBe('SHUTTING_DOWN');
    expect((await call(url, 'GET', '/healthz')).status).toBe(200);
    expect(await proc.exited).toBe(0);
    // Not before the drain was over, and not much after it (nothing was in flight).
    const ms = Date.now() - signalled;
    expect(ms).toBeGreaterThanOrEqual(2_000);
    expect(ms).toBeLessThan(2_000 + 5_000);
    expect(await refused(url)).toBe(true);
    expect(proc.stderr()).toMatch(/shutting down: draining for 2 s \(\/readyz answers 503, requests are still answered\), then requests in flight get 10 s/);
  });

  it('exits 130 at once on a second SIGTERM during the drain', async () => {
    const { proc, url } = await start(60);
    proc.kill('SIGTERM');
    await waitFor(async () => ((await call(url, 'GET', '/readyz')).status === 503 ? true : undefined), '/readyz to answer 503', 1_000, 20);
    const second = Date.now();
    proc.kill('SIGTERM');
    expect(await proc.exited).toBe(130);
    expect(Date.now() - second).toBeLessThan(1_500);
  });
});
