// SafeStream's PHP SDK (API 1.0, Guzzle) against `wmark serve` over real HTTP on loopback, replayed as it sends:
// GET authenticate/accessToken with the key headers, then JSON bodies whose top-level nulls are filtered out but whose
// configurations carry every field (`"animation": null` when there is no move, text fields at their defaults on an
// IMAGE), slashes escaped as PHP's json_encode writes them, a raw URL key appended to ?key= unencoded, templates saved
// without a name, the href polled with the Bearer token, and the example page's unauthenticated poll from a browser.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { flat, tempDir } from '../../harness/fixtures.js';
import { rawRequest, serveEngine, type TestServer } from '../../harness/serve-helpers.js';
import { fixtureIn, solidImage } from '../helpers/images.js';
import { decodeFrame, type RgbFrame } from '../helpers/media.js';
import { type Box, colourBox, type Rgb, SERIALISED_TEXT_DEFAULTS, SMALL } from '../helpers/watermark-helpers.js';

const { width: W, height: H } = SMALL;
const WHITE: Rgb = [255, 255, 255];
const RED: Rgb = [255, 0, 0];
const YELLOW: Rgb = [255, 255, 0];
/** The SDK's README keys videos by their source URL, which has a query of its own. */
const RAW_KEY = 'https://cdn.example.com/screeners/feature-1.mp4?v=2&lang=en';
const GUZZLE = 'GuzzleHttp/6.5.5 curl/7.68.0 PHP/7.4.3';

let engine: TestEngine;
let s: TestServer;
let clip: string;
let logo: string;

beforeAll(async () => {
  engine = await testEngine();
  s = await serveEngine(engine);
  clip = await flat('336699', 4);
  logo = solidImage(fixtureIn(tempDir('php-sdk'), 'logo.png'), 'FF0000', 64, 32);
});
afterAll(async () => {
  await s?.close();
  await engine?.dispose();
});

interface Answer {
  status: number;
  json: any;
  headers: Record<string, string | string[] | undefined>;
}

/** json_encode as PHP writes it: `/` escaped as `\/`, which JSON allows. */
const phpJson = (value: unknown) => JSON.stringify(value).replaceAll('/', '\\/');

/** SafeStreamHttpClient: Guzzle with base_uri {base}/1.0/, a token fetched when it is built, Bearer on every request. */
class PhpSdk {
  private token = '';
  private constructor(private readonly base: string) {}

  static async connect(base: string, clientId: string, apiKey: string): Promise<PhpSdk> {
    const sdk = new PhpSdk(base);
    const r = await sdk.send('GET', 'authenticate/accessToken', { 'x-api-client-id': clientId, 'x-api-key': apiKey });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    sdk.token = r.json.token;
    return sdk;
  }

  /** request($path, $body, $method): Content-Type json and Bearer always; the body's top-level nulls filtered out. */
  request(method: string, path: string, body?: Record<string, unknown>): Promise<Answer> {
    const filtered = body && Object.fromEntries(Object.entries(body).filter(([, v]) => v !== null && v !== undefined));
    return this.send(method, path, { 'Content-Type': 'application/json', Authorization: `Bearer ${this.token}` }, filtered && phpJson(filtered));
  }

  private async send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
    // Guzzle resolves a relative path against base_uri and sends an absolute href as it is; a query goes unencoded.
    const url = new URL(path, `${this.base}/1.0/`);
    const r = await rawRequest(this.base, url.pathname + url.search, {
      method,
      headers: { 'User-Agent': GUZZLE, ...headers, ...(body ? { 'Content-Length': String(Buffer.byteLength(body)) } : {}) },
      ...(body ? { body } : {}),
    });
    return { status: r.status, json: r.text ? JSON.parse(r.text) : undefined, headers: r.headers };
  }

  /** WatermarkClient::createAPI: POST watermark, then GET its href with the token every 3 s (here 0.5 s) until READY. */
  async watermark(body: Record<string, unknown>): Promise<{ created: Answer; ready: Answer }> {
    const created = await this.request('POST', 'watermark', body);
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    return { created, ready: await pollUntilReady(() => this.request('GET', created.json.href)) };
  }
}

async function pollUntilReady(poll: () => Promise<Answer>): Promise<Answer> {
  for (let i = 0; i < 120; i++) {
    const r = await poll();
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    if (r.json.status === 'READY') return r;
    await new Promise((done) => setTimeout(done, 500));
  }
  throw new Error('not READY after 60 s');
}

/** WatermarkConfiguration as the SDK serialises it: every field, the alignments under their long names. */
function configuration(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    content: '',
    type: 'TEXT',
    horizontalAlignment: 'CENTER',
    verticalAlignment: 'MIDDLE',
    x: 0.5,
    y: 0.5,
    ...SERIALISED_TEXT_DEFAULTS,
    animation: null,
    ...fields,
  };
}

/** White opaque text anchored at the top left, as both the settings and the template draw it. */
const topLeftText = (content: string) =>
  configuration({ content, horizontalAlignment: 'LEFT', verticalAlignment: 'TOP', x: 0.05, y: 0.05, fontSize: 0.1, fontOpacity: 1, shadowOpacity: 0 });

const TOP_HALF: Box = { x0: 0, y0: 0, x1: W - 1, y1: H / 2 - 1 };
const BOTTOM_HALF: Box = { x0: 0, y0: H / 2, x1: W - 1, y1: H - 1 };

/** Where `colour` is in `region`; the edges of yellow text come out whitish after chroma subsampling, hence regions. */
function boxOf(frame: RgbFrame, colour: Rgb, what: string, region?: Box): Box {
  const box = colourBox(frame, colour, 60, region);
  if (!box) throw new Error(`no ${what} in the frame`);
  return box;
}

function expectTopLeft(frame: RgbFrame): void {
  const white = boxOf(frame, WHITE, 'white text', TOP_HALF);
  expect(white.x0).toBeGreaterThanOrEqual(Math.floor(0.05 * W) - 2);
  expect(white.x1).toBeLessThan(W / 2);
}

describe('the PHP SDK (API 1.0, Guzzle)', () => {
  let sdk: PhpSdk;
  let video: { id: string; key: string };

  it('gets a token, ingests, and finds the video by its raw URL key', async () => {
    sdk = await PhpSdk.connect(s.url, s.cred.clientId, s.cred.apiKey);
    const created = await sdk.request('POST', 'videos', { name: null, sourceUrl: clip, key: RAW_KEY, tags: null });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    for (let i = 0; ; i++) {
      const found = await sdk.request('GET', `videos?key=${RAW_KEY}`);
      expect(found.status).toBe(200);
      expect(found.json.map((v: { key: string }) => v.key)).toEqual([RAW_KEY]);
      video = found.json[0];
      if (found.json[0].status === 'INGESTED') break;
      expect(i).toBeLessThan(120);
      await new Promise((done) => setTimeout(done, 500));
    }
  });

  it('watermarks with a TEXT and an IMAGE configuration carrying every field, the image on a MOVE; polled with the token', async () => {
    // The logo as a client that sends only what it means, and as the SDK serialises it, every field included.
    const bare = {
      type: 'IMAGE',
      content: logo,
      horizontalAlignment: 'RIGHT',
      verticalAlignment: 'BOTTOM',
      x: 0.3,
      y: 0.95,
      width: 0.2,
      animation: { type: 'MOVE', toX: 0.95, toY: 0.95, startTime: 0, endTime: 2 },
    };
    const image = configuration({ ...bare, opacity: 1 });
    const { created, ready } = await sdk.watermark({ key: RAW_KEY, settings: [topLeftText('PHP SDK'), image] });
    expect(created.json).toMatchObject({
      videoId: video.id,
      status: expect.stringMatching(/^(PENDING|READY)$/),
      containers: { href: expect.any(String), iframe: expect.stringMatching(/^<iframe /) },
      href: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/1\.0\/watermark\//),
    });
    expect(ready.json.containers.m3u8).toMatch(/\/1\.0\/watermark\/.*video\.m3u8\?/);

    const [start, end] = [await decodeFrame(ready.json.containers.m3u8, 0, SMALL), await decodeFrame(ready.json.containers.m3u8, 3, SMALL)];
    expectTopLeft(end);
    // The logo's right edge is at x, moving from 0.3 to 0.95 of the width over the first two seconds, then held.
    expect(Math.abs(boxOf(start, RED, 'logo').x1 - 0.3 * W)).toBeLessThanOrEqual(3);
    expect(Math.abs(boxOf(end, RED, 'logo').x1 - 0.95 * W)).toBeLessThanOrEqual(3);
    expect(boxOf(end, RED, 'logo').y1).toBeGreaterThan(0.9 * H);

    // The same configuration again is the same watermark: the defaulted text fields on the IMAGE changed nothing.
    const again = await sdk.request('POST', 'watermark', { key: RAW_KEY, settings: [topLeftText('PHP SDK'), bare] });
    expect([again.status, again.json.href.split('?')[0]]).toEqual([200, created.json.href.split('?')[0]]);

    // A text field off its default on an IMAGE is still refused, by name.
    const off = await sdk.request('POST', 'watermark', { key: RAW_KEY, settings: [{ ...image, fontSize: 0.2 }] });
    expect([off.status, off.json.code, off.json.message]).toEqual([
      400,
      'VALIDATION_FAILED',
      [expect.stringMatching(/^settings\[0\]\.fontSize: applies to TEXT settings only/)],
    ]);
  });

  it('saves a nameless template with both placeholder notations, creates from it, and a browser polls the href without credentials', async () => {
    const email = configuration({ content: '%email%', horizontalAlignment: 'LEFT', verticalAlignment: 'BOTTOM', x: 0.05, y: 0.95, fontSize: 0.1 });
    const moving = { ...email, fontColor: '0xFFFF00', fontOpacity: 1, shadowOpacity: 0, animation: { type: 'MOVE', toX: 0.4, startTime: 0, endTime: 2 } };
    const saved = await sdk.request('POST', 'templates', { name: null, description: null, settings: [topLeftText('[%name%]'), moving] });
    expect(saved.status, JSON.stringify(saved.json)).toBe(201);
    expect(saved.json).toMatchObject({ name: saved.json.id, placeholders: ['name', 'email'] });
    const listed = await sdk.request('GET', 'templates');
    expect(listed.json.find((t: { id: string }) => t.id === saved.json.id)?.name).toBe(saved.json.id);

    const mappings = { name: 'ANN', email: 'ann@example.com' };
    const created = await sdk.request('POST', 'watermark', { key: RAW_KEY, settingsTemplateMapping: { id: saved.json.id, mappings } });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    // The example page polls from the browser: no credentials, another origin.
    const href = new URL(created.json.href);
    const ready = await pollUntilReady(async () => {
      const r = await rawRequest(s.url, href.pathname + href.search, { headers: { Origin: 'http://shop.example', Accept: 'application/json' } });
      expect(r.headers['access-control-allow-origin']).toBeDefined();
      return { status: r.status, json: JSON.parse(r.text), headers: r.headers };
    });
    expect(ready.json.href).toBeUndefined();

    const [start, end] = [await decodeFrame(ready.json.containers.m3u8, 0, SMALL), await decodeFrame(ready.json.containers.m3u8, 3, SMALL)];
    expectTopLeft(end);
    const [from, to] = [boxOf(start, YELLOW, 'email text', BOTTOM_HALF), boxOf(end, YELLOW, 'email text', BOTTOM_HALF)];
    expect(Math.abs(from.x0 - 0.05 * W)).toBeLessThanOrEqual(4);
    expect(Math.abs(to.x0 - 0.4 * W)).toBeLessThanOrEqual(4);
    expect(to.y1).toBeGreaterThan(0.85 * H);
  });
});
