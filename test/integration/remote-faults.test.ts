// Remote mode against a small in-test HTTP service that misbehaves on purpose: token renewal, retries, bad bodies, hangs, rate limits, refused links.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CliResult, runCli } from '../../harness/cli.js';

interface Seen {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

type Handler = (req: IncomingMessage, res: ServerResponse, seen: Seen) => void | Promise<void>;

interface FakeService {
  url: string;
  requests: Seen[];
  /** Requests to one path (query ignored). */
  to(method: string, p: string): Seen[];
  close(): Promise<void>;
}

async function fakeService(handler: Handler): Promise<FakeService> {
  const requests: Seen[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const seen: Seen = {
      method: req.method ?? '',
      path: (req.url ?? '').split('?')[0]!,
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
      at: Date.now(),
    };
    requests.push(seen);
    await handler(req, res, seen);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    to: (method, p) => requests.filter((r) => r.method === method && r.path === p),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

const READY = (base: string) => ({
  status: 'READY',
  containers: { href: `${base}/player/2.0/?sourceUrl=x`, m3u8: `${base}/2.0/watermark/v/h/video.m3u8?expiration=1&signature=s` },
  href: `${base}/2.0/watermark/v/h?expiration=1&signature=s`,
  vendorExtra: { region: 'eu-1' },
});

let root: string;
let configDir: string;
let service: FakeService | undefined;
const credentialsFile = () => path.join(configDir, 'credentials.json');

function cli(argv: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  return runCli(argv, { cwd: root, env: { WMARK_CONFIG_DIR: configDir, ...env } });
}

const KEYS = { WMARK_CLIENT_ID: 'client-1', WMARK_API_KEY: 'secret-key-1' };

/** Serves the token endpoint (tok-1, tok-2, ...) and hands everything else to `rest`. */
function withTokens(rest: Handler, options: { expiresIn?: number } = {}): Handler {
  let issued = 0;
  return (req, res, seen) => {
    if (seen.path === '/1.0/authenticate/accessToken') {
      if (req.headers['x-api-client-id'] !== 'client-1' || req.headers['x-api-key'] !== 'secret-key-1')
        return json(res, 401, { message: 'invalid client id or API key', code: 'AUTH_INVALID' });
      return json(res, 200, { token: `tok-${++issued}`, expiresIn: options.expiresIn ?? 3600 });
    }
    return rest(req, res, seen);
  };
}

beforeEach(() => {
  root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'wmark-faults-')));
  configDir = path.join(root, 'config');
  mkdirSync(configDir);
});

afterEach(async () => {
  await service?.close();
  service = undefined;
  rmSync(root, { recursive: true, force: true });
});

const watermark1 = (extra: string[] = []) => ['--json', 'watermark', '--remote', '--api', '1.0', '--key', 'movie', '--text', 'for alice', ...extra];
const watermark2 = (extra: string[] = []) => [
  '--json',
  'watermark',
  '--remote',
  service!.url,
  '--api',
  '2.0',
  '--key',
  'movie',
  '--text',
  'for alice',
  ...extra,
];

describe('tokens', () => {
  it('a 401 on a stored token renews it once from the saved key, then the request succeeds; unknown fields are kept', async () => {
    service = await fakeService(
      withTokens((req, res, seen) => {
        if (seen.path !== '/1.0/watermark') return json(res, 404, { message: 'no route', code: 'NOT_FOUND' });
        if (req.headers.authorization === 'Bearer tok-1') return json(res, 401, { message: 'the access token has expired', code: 'TOKEN_EXPIRED' });
        if (req.headers.authorization === 'Bearer tok-2') return json(res, 201, READY(service!.url));
        json(res, 401, { message: 'who are you', code: 'AUTH_REQUIRED' });
      }),
    );
    const login = await cli(['auth', 'login', '--remote', service.url, '--api', '1.0', '--client-id', 'client-1', '--api-key', 'secret-key-1', '--save-key']);
    expect(login.code, login.stderr).toBe(0);
    // The user asked for the key to be stored, so it is; still owner-only.
    expect(readFileSync(credentialsFile(), 'utf8')).toContain('secret-key-1');
    expect(statSync(credentialsFile()).mode & 0o777).toBe(0o600);

    const r = await cli(watermark1());
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ status: 'READY', vendorExtra: { region: 'eu-1' } });
    expect(service.to('POST', '/1.0/watermark').map((s) => s.headers.authorization)).toEqual(['Bearer tok-1', 'Bearer tok-2']);
    expect(service.to('GET', '/1.0/authenticate/accessToken')).toHaveLength(2);
    expect(JSON.parse(readFileSync(credentialsFile(), 'utf8')).services[service.url].token).toBe('tok-2');
    expect(statSync(credentialsFile()).mode & 0o777).toBe(0o600);
  });

  it('a 401 after the renewal is exit 4 with the service message; only one renewal', async () => {
    service = await fakeService(withTokens((_req, res) => json(res, 401, { message: 'client suspended', code: 'AUTH_INVALID' })));
    expect(
      (await cli(['auth', 'login', '--remote', service.url, '--api', '1.0', '--client-id', 'client-1', '--api-key', 'secret-key-1', '--save-key'])).code,
    ).toBe(0);
    const r = await cli(['watermark', '--remote', '--key', 'movie', '--text', 'x']);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('HTTP 401 Unauthorized (AUTH_INVALID): client suspended');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(service.to('POST', '/1.0/watermark')).toHaveLength(2);
    expect(service.to('GET', '/1.0/authenticate/accessToken')).toHaveLength(2);
  });

  it('an expired stored token is renewed before use from WMARK_CLIENT_ID/WMARK_API_KEY; the file never holds the key', async () => {
    service = await fakeService(
      withTokens(
        (req, res) =>
          req.headers.authorization === 'Bearer tok-2' ? json(res, 200, READY(service!.url)) : json(res, 401, { message: 'expired', code: 'TOKEN_EXPIRED' }),
        { expiresIn: 1 },
      ),
    );
    const login = await cli(['auth', 'login', '--remote', service.url, '--api', '1.0'], KEYS);
    expect(login.code, login.stderr).toBe(0);
    expect(readFileSync(credentialsFile(), 'utf8')).not.toContain('secret-key-1');

    const without = await cli(watermark1());
    expect(without.code).toBe(4);
    expect(without.json().error.message).toMatch(/has expired and cannot be renewed/);
    expect(service.to('POST', '/1.0/watermark')).toHaveLength(0);

    const r = await cli(watermark1(), KEYS);
    expect(r.code, r.stderr).toBe(0);
    expect(service.to('POST', '/1.0/watermark').map((s) => s.headers.authorization)).toEqual(['Bearer tok-2']);
    const stored = readFileSync(credentialsFile(), 'utf8');
    expect(JSON.parse(stored).services[service.url].token).toBe('tok-2');
    expect(stored).not.toContain('secret-key-1');
  });

  it('2.0 sends the API key headers, not a token', async () => {
    service = await fakeService((_req, res) => json(res, 200, READY(service!.url)));
    const r = await cli(watermark2(), KEYS);
    expect(r.code, r.stderr).toBe(0);
    const [post] = service.to('POST', '/2.0/watermark');
    expect(post!.headers).toMatchObject({ 'x-api-key': 'secret-key-1', 'x-api-client-id': 'client-1', 'content-type': 'application/json' });
    expect(post!.headers.authorization).toBeUndefined();
    expect(JSON.parse(post!.body)).toEqual({ key: 'movie', settings: [{ content: 'for alice' }] });
    expect(existsSync(credentialsFile())).toBe(false);
  });
});

describe('request bodies', () => {
  it('--forensic travels as FORENSIC content in the chosen version: base64 of 2 bytes in 2.0, 2 ASCII characters in 1.0', async () => {
    service = await fakeService((_req, res) => json(res, 200, READY(service!.url)));
    expect((await cli(watermark2(['--forensic', 'AB']), KEYS)).code).toBe(0);
    expect(JSON.parse(service.to('POST', '/2.0/watermark')[0]!.body).settings).toEqual([{ content: 'for alice' }, { type: 'FORENSIC', content: 'QUI=' }]);
    expect((await cli(['watermark', '--remote', service.url, '--api', '1.0', '--key', 'movie', '--forensic', '16706'], { WMARK_TOKEN: 'tok-env' })).code).toBe(
      0,
    );
    expect(JSON.parse(service.to('POST', '/1.0/watermark')[0]!.body)).toEqual({ key: 'movie', settings: [{ type: 'FORENSIC', content: 'AB' }] });
    const template = await cli(['watermark', '--remote', service.url, '--key', 'movie', '--template', 't', '--forensic', 'AB'], KEYS);
    expect(template.code).toBe(2);
    expect(template.stderr).toContain('--forensic cannot be added to a --template request');
  });

  it('--containers, --expiration and --video-id are sent only when given', async () => {
    service = await fakeService((_req, res) => json(res, 200, READY(service!.url)));
    const r = await cli(
      [
        'watermark',
        '--remote',
        service.url,
        '--api',
        '2.0',
        '--video-id',
        'vid-1',
        '--text',
        'x',
        '--containers',
        'mp4',
        '--expiration',
        '2030-01-01T00:00:00Z',
      ],
      KEYS,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(service.requests[0]!.body)).toEqual({ videoId: 'vid-1', containers: ['mp4'], expiration: 1893456000, settings: [{ content: 'x' }] });
  });
});

describe('transient failures and timeouts', () => {
  it('503 twice, then 200: retried with backoff, exit 0', async () => {
    let n = 0;
    service = await fakeService((_req, res) =>
      ++n <= 2 ? json(res, 503, { message: 'warming up', code: 'UNAVAILABLE' }) : json(res, 200, READY(service!.url)),
    );
    const r = await cli(watermark2(), KEYS);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().status).toBe('READY');
    expect(service.to('POST', '/2.0/watermark')).toHaveLength(3);
    expect(r.stderr.match(/HTTP 503 from POST .*\/2\.0\/watermark; retrying in/g)).toHaveLength(2);
  });

  it('429 with Retry-After waits as asked, then succeeds', async () => {
    let n = 0;
    service = await fakeService((_req, res) =>
      ++n === 1 ? json(res, 429, { message: 'slow down', code: 'RATE_LIMITED' }, { 'Retry-After': '1' }) : json(res, 200, READY(service!.url)),
    );
    const r = await cli(watermark2(), KEYS);
    expect(r.code, r.stderr).toBe(0);
    const [first, second] = service.to('POST', '/2.0/watermark');
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(950);
  });

  it('429 asking for longer than the timeout allows is exit 5 with the service message, no pointless wait', async () => {
    service = await fakeService((_req, res) => json(res, 429, { message: 'slow down', code: 'RATE_LIMITED' }, { 'Retry-After': '120' }));
    const started = Date.now();
    const r = await cli(watermark2(['--timeout', '5s']), KEYS);
    expect(r.code).toBe(5);
    expect(r.json().error).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringContaining('HTTP 429 Too Many Requests (RATE_LIMITED): slow down') });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('a hanging response ends at --timeout with exit 124', async () => {
    service = await fakeService(() => {
      /* never answers */
    });
    const started = Date.now();
    const r = await cli(['watermark', '--remote', service.url, '--api', '2.0', '--key', 'movie', '--text', 'x', '--timeout', '1s'], KEYS);
    expect(r.code).toBe(124);
    expect(r.stderr).toMatch(/timed out after 1\.\d s: no answer from POST http:\/\/127\.0\.0\.1:\d+\/2\.0\/watermark/);
    expect(r.stderr).toContain('--timeout');
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('headers sent, then a stalled body: still cut off at --timeout', async () => {
    service = await fakeService((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"status":');
    });
    const r = await cli(watermark2(['--timeout', '1s']), KEYS);
    expect(r.code).toBe(124);
  });

  it('a connection refused is retried, then exit 5 naming the service', async () => {
    const closed = await fakeService(() => {});
    const url = closed.url;
    await closed.close();
    const r = await runCli(['watermark', '--remote', url, '--api', '2.0', '--key', 'movie', '--text', 'x', '--timeout', '3s'], {
      cwd: root,
      env: { WMARK_CONFIG_DIR: configDir, ...KEYS },
    });
    expect(r.code).toBe(5);
    expect(r.stderr).toContain(`cannot reach the service: POST ${url}/2.0/watermark: connection refused`);
    expect(r.stderr).toMatch(/retrying in/);
  });
});

describe('bad answers', () => {
  it('malformed JSON in a 200 is exit 5, not a stack trace', async () => {
    service = await fakeService((_req, res) => json(res, 200, '{"status": "READY", "containers": {'));
    const r = await cli(['watermark', '--remote', service.url, '--api', '2.0', '--key', 'movie', '--text', 'x'], KEYS);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('with a body that is not valid JSON');
    expect(r.stderr).not.toMatch(/SyntaxError|\n\s+at /);
  });

  it('a 200 without a status is exit 5 naming the missing field', async () => {
    service = await fakeService((_req, res) => json(res, 200, { containers: {} }));
    const r = await cli(watermark2(), KEYS);
    expect(r.code).toBe(5);
    expect(r.json().error.message).toMatch(/unexpected watermark response .*status/);
  });

  it('an error body with an array of messages is shown as sent, with the status; a 4xx is not retried', async () => {
    service = await fakeService((_req, res) =>
      json(res, 400, { message: ['settings[0].x: must be a number', 'settings[0].fontColor: must be RRGGBB'], code: 'VALIDATION_FAILED' }),
    );
    const human = await cli(['watermark', '--remote', service.url, '--api', '2.0', '--key', 'movie', '--text', 'x'], KEYS);
    expect(human.code).toBe(2);
    expect(human.stderr).toContain(
      'HTTP 400 Bad Request (VALIDATION_FAILED): 2 problems:\n  - settings[0].x: must be a number\n  - settings[0].fontColor: must be RRGGBB',
    );
    expect(service.to('POST', '/2.0/watermark')).toHaveLength(1);
    const j = await cli(watermark2(), KEYS);
    expect(j.json().error).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: expect.arrayContaining(['settings[0].x: must be a number', 'settings[0].fontColor: must be RRGGBB']),
    });
  });

  it('a {message, code} 422 keeps both; an HTML 500 is exit 5 without dumping the page', async () => {
    service = await fakeService((_req, res, seen) => {
      if (JSON.parse(seen.body).key === 'short')
        return json(res, 422, { message: 'forensic watermarks need a video of at least 5 minutes', code: 'FORENSIC_TOO_SHORT' });
      res.writeHead(500, { 'Content-Type': 'text/html' });
      res.end('<html><body><h1>Internal Server Error</h1><pre>Traceback ...</pre></body></html>');
    });
    const r = await cli(['watermark', '--remote', service.url, '--api', '2.0', '--key', 'short', '--text', 'x'], KEYS);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('HTTP 422 Unprocessable Entity (FORENSIC_TOO_SHORT): forensic watermarks need a video of at least 5 minutes');
    const html = await cli(['watermark', '--remote', service.url, '--api', '2.0', '--key', 'movie', '--text', 'x'], KEYS);
    expect(html.code).toBe(5);
    expect(html.stderr).toContain('HTTP 500 Internal Server Error: the service gave no message');
    expect(html.stderr).not.toContain('<html>');
  });
});

describe('poll', () => {
  it('a 403 on the href is a clear message, exit 4; a 410 likewise', async () => {
    service = await fakeService((_req, res, seen) =>
      seen.path.endsWith('/gone')
        ? json(res, 410, { message: 'this watermarked video expired', code: 'WATERMARK_EXPIRED' })
        : json(res, 403, { message: 'this link has expired', code: 'SIGNATURE_EXPIRED' }),
    );
    const r = await cli(['poll', `${service.url}/1.0/watermark/v/h?expiration=1&signature=x`]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('the link was refused, it has expired or is not valid: HTTP 403 Forbidden (SIGNATURE_EXPIRED): this link has expired');
    expect(r.stderr).toContain('Send the same watermark request again');
    expect(service.requests).toHaveLength(1);
    const gone = await cli(['--json', 'poll', `${service.url}/1.0/watermark/v/gone?expiration=1&signature=x`]);
    expect(gone.code).toBe(4);
    expect(gone.json().error).toMatchObject({ code: 'WATERMARK_EXPIRED' });
  });

  it('rides out 502, a reset connection and 503, polls PENDING, prints READY', async () => {
    const script = ['502', 'reset', '503', 'PENDING', 'PENDING', 'READY'];
    service = await fakeService((req, res) => {
      const step = script.shift() ?? 'READY';
      if (step === 'reset') {
        req.socket.destroy();
        return;
      }
      if (/^\d+$/.test(step)) return json(res, Number(step), { message: 'gateway trouble' });
      json(
        res,
        200,
        step === 'READY'
          ? { status: 'READY', containers: { href: 'http://p/player', m3u8: 'http://p/v.m3u8' } }
          : { status: 'PENDING', containers: { href: 'http://p/player' } },
      );
    });
    const r = await cli(['poll', `${service.url}/1.0/watermark/v/h?expiration=1&signature=x`, '--interval', '100ms', '--timeout', '30s']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/READY/);
    expect(r.stdout).toContain('playlist  http://p/v.m3u8');
    expect(r.stderr).toContain('PENDING, polling every 0.1 s');
    // Plain output: no spinner frames or cursor movement.
    expect(r.stderr).not.toContain('\u001b[');
    expect(service.requests).toHaveLength(6);
  });

  it('still PENDING at --timeout is exit 124; a 404 is not retried (exit 2); FAILED prints the result and exits 6', async () => {
    service = await fakeService((_req, res, seen) => {
      if (seen.path.endsWith('/missing')) return json(res, 404, { message: 'no such watermark', code: 'WATERMARK_NOT_FOUND' });
      if (seen.path.endsWith('/failed')) return json(res, 200, { status: 'FAILED', error: 'ffmpeg exploded' });
      json(res, 200, { status: 'PENDING' });
    });
    const slow = await cli(['poll', `${service.url}/1.0/watermark/v/h`, '--interval', '200ms', '--timeout', '1s']);
    expect(slow.code).toBe(124);
    expect(slow.stderr).toMatch(/timed out after \d\.\d s: the watermark is still PENDING/);
    const missing = await cli(['poll', `${service.url}/1.0/watermark/v/missing`]);
    expect(missing.code).toBe(2);
    expect(service.to('GET', '/1.0/watermark/v/missing')).toHaveLength(1);
    const failed = await cli(['--json', 'poll', `${service.url}/1.0/watermark/v/failed`]);
    expect(failed.code).toBe(6);
    expect(failed.json()).toEqual({ status: 'FAILED', error: 'ffmpeg exploded' });
  });

  it('a bad href or interval is a usage error (exit 2)', async () => {
    expect((await cli(['poll', 'not a url'])).code).toBe(2);
    expect((await cli(['poll', 'http://127.0.0.1:9/x', '--interval', 'soon'])).code).toBe(2);
  });
});

describe('batch', () => {
  it('runs at most --concurrency requests at once, streams NDJSON, and reports a failed row without stopping the rest', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    service = await fakeService(async (_req, res, seen) => {
      // The CLI reads the template once to check every row's mappings before sending any request.
      if (seen.method === 'GET' && seen.path === '/2.0/templates/tpl-1')
        return json(res, 200, { id: 'tpl-1', name: 'greeting', settings: [{ content: 'for %name%' }] });
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setTimeout(r, 150));
      inFlight--;
      const body = JSON.parse(seen.body);
      if (body.settingsTemplateMapping.mappings.name === 'Bad') return json(res, 400, { message: 'name: not allowed', code: 'VALIDATION_FAILED' });
      json(res, 201, { ...READY(service!.url), echo: body.settingsTemplateMapping });
    });
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path.join(root, 'rows.ndjson'), ['Ann', 'Ben', 'Bad', 'Dee', 'Eve', 'Fay'].map((name) => JSON.stringify({ name })).join('\n'));
    const r = await cli(
      ['--json', 'watermark', '--remote', service.url, '--api', '2.0', '--key', 'movie', '--template', 'tpl-1', '--batch', 'rows.ndjson', '--concurrency', '2'],
      KEYS,
    );
    expect(r.code).toBe(2);
    const lines = r.lines();
    expect(lines).toHaveLength(6);
    expect(maxInFlight).toBe(2);
    const bad = lines.find((l) => l.mappings.name === 'Bad');
    expect(bad.error).toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining('HTTP 400') });
    for (const l of lines.filter((x) => x !== bad)) expect(l).toMatchObject({ status: 'READY', echo: { id: 'tpl-1', mappings: { name: l.mappings.name } } });
    expect(r.stderr).toContain('1 of 6 rows failed');
  });
});
