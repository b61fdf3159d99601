// An IMAGE setting's image is fetched once per request, checked before the request is accepted (each refusal a precise
// 4xx naming the field, nothing recorded), kept in the media store, and drawn from there by every later render: after
// the URL changes or goes away, and after a restart. API clients' image URLs and paths follow the source policy.
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestEngine, testEngine, watermarkDir } from '../../harness/engine.js';
import { flat, tempDir } from '../../harness/fixtures.js';
import { call, keyHeaders, messagesOf } from '../../harness/serve-helpers.js';
import { isWmarkError, type WmarkError } from '../../src/core/errors.js';
import { segmentFileName } from '../../src/core/plan/segment-timing.js';
import { createCredential } from '../../src/engine/app/credentials.js';
import { inProcessJobQueue } from '../../src/engine/app/job-runs.js';
import { LocalService } from '../../src/engine/app/local-service.js';
import { mediaKeys } from '../../src/engine/data-folder/layout.js';
import { serverSourcePolicy } from '../../src/engine/ingest/source-policy.js';
import type { InProcessJobQueue } from '../../src/engine/jobs/job-queue.js';
import type { VideoRecord } from '../../src/engine/state/state-store.js';
import { ensureSegment } from '../../src/engine/watermark/on-demand.js';
import { requestWatermark } from '../../src/engine/watermark/request.js';
import { runWatermarkJob } from '../../src/engine/watermark/watermark-job.js';
import { createApp } from '../../src/server/app/app.js';
import { animatedImage, fixtureIn, type ImageServer, imageServer, plainPng, solidImage } from '../helpers/images.js';
import { decodeFrame } from '../helpers/media.js';
import { expectError } from '../helpers/serve-in-tests.js';
import { colourBox, ingestFixture, SMALL, settingsOf } from '../helpers/watermark-helpers.js';

const KEY = 'clip';
const dir = tempDir('image-source');
let engine: TestEngine;
let video: VideoRecord;
let cdn: ImageServer;
let red: string;
let blue: string;

beforeAll(async () => {
  engine = await testEngine({ dataDir: path.join(dir, 'data') });
  video = await ingestFixture(engine, await flat('336699', 12), KEY);
  cdn = await imageServer();
  red = solidImage(fixtureIn(dir, 'red.png'), 'FF0000', 64, 32);
  blue = solidImage(fixtureIn(dir, 'blue.png'), '0000FF', 64, 32);
});
afterAll(async () => {
  await cdn?.close();
  await engine?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const logo = (content: string, fields: Record<string, unknown> = {}) => ({
  type: 'IMAGE',
  content,
  x: 0.25,
  y: 0.25,
  align: 'LEFT',
  verticalAlign: 'TOP',
  ...fields,
});
const ask = (settings: Record<string, unknown>[]) => requestWatermark(engine, { video: { key: KEY }, settings: settingsOf(settings), containers: ['m3u8'] });
const refusal = (settings: Record<string, unknown>[]) =>
  ask(settings).then(
    () => expect.unreachable('accepted'),
    (e: unknown) => e as WmarkError,
  );

describe('fetched once, kept with the watermark', () => {
  it('fetches an image named twice in one request once, and keeps its bytes and a rendition at the drawn size', async () => {
    const url = cdn.serve('/twice.png', red);
    const { watermark, created } = await ask([logo(url), logo(url, { x: 0.6 })]);
    expect(created).toBe(true);
    expect(cdn.hits('/twice.png')).toBe(1);
    const [a, b] = watermark.settings as { image: { sha256: string; format: string; width: number; height: number } }[];
    expect(a!.image).toEqual(b!.image);
    expect(a!.image).toMatchObject({ format: 'png', width: 64, height: 32 });
    expect(await engine.media.exists(mediaKeys.image(a!.image.sha256, 'png'))).toBe(true);
    // 0.2 (the default width) of 320 px: 64x32, the rendition beside the original.
    expect(await engine.media.exists(mediaKeys.imageRendition(a!.image.sha256, { width: 64, height: 32 }))).toBe(true);
  });

  it('is the same watermark when asked again, with the same image, and fetches nothing even when the URL serves another', async () => {
    const url = cdn.serve('/changing.png', red);
    const first = await ask([logo(url)]);
    await runWatermarkJob(engine, first.watermark.id);
    cdn.serve('/changing.png', blue);
    const again = await ask([logo(url)]);
    expect(again.created).toBe(false);
    expect(again.watermark.id).toBe(first.watermark.id);
    expect(again.watermark.settings).toEqual(first.watermark.settings);
    expect(cdn.hits('/changing.png')).toBe(1);
    // Any change of the settings is a new watermark, which fetches the image as it is now.
    const changed = await ask([logo(url, { opacity: 0.99 })]);
    expect(changed.created).toBe(true);
    expect(cdn.hits('/changing.png')).toBe(2);
    expect((changed.watermark.settings[0] as { image: { sha256: string } }).image.sha256).not.toBe(
      (first.watermark.settings[0] as { image: { sha256: string } }).image.sha256,
    );
  });

  it('draws the kept bytes in later renders: on demand, after a restart, with the URL gone and the drawing folder removed', async () => {
    const url = cdn.serve('/gone-later.png', red);
    const { watermark } = await requestWatermark(engine, { video: { key: KEY }, settings: settingsOf([logo(url)]), containers: ['m3u8'], render: 'on-demand' });
    await runWatermarkJob(engine, watermark.id);
    cdn.serve('/gone-later.png', Buffer.from('gone'), { status: 404 });
    const folder = watermarkDir(engine, video.id, watermark.id);
    rmSync(path.join(folder, '.draw'), { recursive: true, force: true });
    const last = video.segments.length - 1;
    expect(existsSync(path.join(folder, segmentFileName(last)))).toBe(false);

    // Another engine on the same data folder: a restarted serve.
    const restarted = await testEngine({ dataDir: engine.dataDir });
    try {
      expect(await ensureSegment(restarted, (await restarted.store.getWatermark(watermark.id))!, last)).toBe(true);
    } finally {
      await restarted.dispose();
    }
    const frame = await decodeFrame(path.join(folder, segmentFileName(last)), 0.5, SMALL);
    expect(colourBox(frame, [255, 0, 0], 60)).toMatchObject({ x0: 80, x1: 143, y0: 44, y1: 75 });
  });
});

describe('checked before the request is accepted', () => {
  const cases: [string, () => string, string, RegExp][] = [
    [
      'an unreachable URL (404)',
      () => `${cdn.url}/missing.png`,
      'IMAGE_UNREACHABLE',
      /^settings\[0\]\.content: could not read http:\/\/127\.0\.0\.1:\d+\/missing\.png: the server answered 404/,
    ],
    [
      'an HTML page',
      () => cdn.serve('/page.png', Buffer.from('<!DOCTYPE html><html></html>'), { type: 'text/html' }),
      'NOT_AN_IMAGE',
      /is an HTML page, not an image$/,
    ],
    [
      'an SVG drawing',
      () => cdn.serve('/logo.svg', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), { type: 'image/svg+xml' }),
      'IMAGE_UNSUPPORTED',
      /is an SVG drawing/,
    ],
    ['a GIF', () => cdn.serve('/logo.gif', Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;'), { type: 'image/gif' }), 'IMAGE_UNSUPPORTED', /is a GIF/],
    ['an animated PNG', () => cdn.serve('/anim.png', animatedImage(fixtureIn(dir, 'anim.apng'), 'apng')), 'IMAGE_UNSUPPORTED', /is an animated PNG/],
    ['an animated WebP', () => cdn.serve('/anim.webp', animatedImage(fixtureIn(dir, 'anim.webp'), 'webp')), 'IMAGE_UNSUPPORTED', /is an animated WebP/],
    [
      'an image over 4096 pixels wide',
      () => cdn.serve('/wide.png', plainPng(fixtureIn(dir, 'wide.png'), 4098, 8)),
      'IMAGE_TOO_LARGE',
      /is 4098x8 pixels; images may be up to 10 MB and 4096x4096 pixels$/,
    ],
    [
      'a file over 10 MB',
      () => cdn.serve('/huge.png', Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), Buffer.alloc(10 * 1024 * 1024)])),
      'IMAGE_TOO_LARGE',
      /larger than 10485760 bytes/,
    ],
    [
      'a damaged PNG',
      () =>
        cdn.serve(
          '/damaged.png',
          Buffer.concat([
            Buffer.from('\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06\x00\x00\x00', 'latin1'),
            Buffer.alloc(64, 7),
          ]),
        ),
      'NOT_AN_IMAGE',
      /could not be decoded|decodes to no picture|does not decode/,
    ],
    ['a missing file', () => path.join(dir, 'no-such-logo.png'), 'IMAGE_UNREACHABLE', /^settings\[0\]\.content: no such file: \//],
  ];

  it.each(cases)('refuses %s with a 4xx naming the field, and records nothing', async (_what, content, code, message) => {
    const before = (await engine.store.listWatermarks()).length;
    const error = await refusal([logo(content()), { content: 'for alice' }]);
    expect(isWmarkError(error) && error.code).toBe(code);
    expect(error.message).toMatch(message);
    expect(error.httpStatus).toBe(422);
    expect(error.exitCode).toBe(2);
    expect((await engine.store.listWatermarks()).length).toBe(before);
  });

  it('refuses a width that would draw the image larger than 4096 pixels, naming .width', async () => {
    const tall = cdn.serve('/tall.png', plainPng(fixtureIn(dir, 'tall.png'), 8, 4000));
    const error = await refusal([logo(tall, { width: 0.5 })]);
    expect(error.code).toBe('IMAGE_TOO_LARGE');
    expect(error.message).toBe('settings[0].width: the image would be drawn 160x80000 pixels on this video, larger than 4096x4096; give a smaller width');
  });

  it('reads a local path for the CLI, made absolute so the same file named two ways is one watermark', async () => {
    const copy = fixtureIn(dir, 'local.png');
    copyFileSync(red, copy);
    const relative = path.relative(process.cwd(), copy);
    const a = await ask([logo(relative)]);
    const b = await ask([logo(copy)]);
    expect(b.watermark.id).toBe(a.watermark.id);
    expect((a.watermark.settings[0] as { content: string }).content).toBe(copy);
  });
});

describe('for API clients: the source policy, over HTTP', () => {
  it('refuses loopback URLs and local paths a server would not read for a video, naming the field; allows them when told', async () => {
    const url = cdn.serve('/api.png', red);
    const queues: InProcessJobQueue[] = [];
    const open = async (policy: ReturnType<typeof serverSourcePolicy>) => {
      const queue = inProcessJobQueue(engine, { concurrency: 1 });
      queues.push(queue);
      const service = new LocalService(engine, { queue, baseUrl: 'http://wmark.test', sourcePolicy: policy, render: 'on-demand' });
      return {
        app: createApp({ service, linkBase: 'http://wmark.test', tokenTtlSeconds: 3600 }),
        headers: keyHeaders(await createCredential(engine, 'images')),
      };
    };
    const post = (s: Awaited<ReturnType<typeof open>>, settings: unknown[]) =>
      call(s.app, 'POST', '/2.0/watermark', { headers: s.headers, body: { key: KEY, settings, containers: ['m3u8'] } });

    // Bound beyond loopback with no --source-root: no local files, no private addresses.
    const strict = await open(serverSourcePolicy('0.0.0.0'));
    const byUrl = await post(strict, [logo(url)]);
    expectError(byUrl, 403, 'SOURCE_ADDRESS_FORBIDDEN');
    expect(messagesOf(byUrl)[0]).toMatch(/^settings\[0\]\.content: 127\.0\.0\.1 resolves to a loopback, private or link-local address/);
    // The same origin through IPv6 forms that carry its IPv4 address: judged by it, never connected to.
    for (const host of ['[64:ff9b:1::7f00:1]', '[::ffff:0:7f00:1]', '[2002:7f00:1::]']) {
      const carried = await post(strict, [logo(url.replace('127.0.0.1', host))]);
      expectError(carried, 403, 'SOURCE_ADDRESS_FORBIDDEN');
    }
    const byPath = await post(strict, [logo(red)]);
    expectError(byPath, 403, 'SOURCE_PATH_FORBIDDEN');
    expect(messagesOf(byPath)[0]).toMatch(/^settings\[0\]\.content: /);
    // A template's settings are named as the template's.
    const template = await call(strict.app, 'POST', '/2.0/templates', {
      headers: strict.headers,
      body: { name: 'branded', settings: [{ type: 'IMAGE', content: '[%logo%]' }, { content: 'for [%name%]' }] },
    });
    expect(template.status).toBe(201);
    const rendered = await call(strict.app, 'POST', '/2.0/watermark', {
      headers: strict.headers,
      body: { key: KEY, settingsTemplateMapping: { id: template.json.id, mappings: { logo: url, name: 'Alice' } } },
    });
    expectError(rendered, 403, 'SOURCE_ADDRESS_FORBIDDEN');
    expect(messagesOf(rendered)[0]).toMatch(/^template\.settings\[0\]\.content: /);

    const trusting = await open(serverSourcePolicy('127.0.0.1', { allowPrivateSources: true }));
    const ok = await post(trusting, [logo(url), { content: 'for alice' }]);
    expect(ok.status, ok.text).toBe(201);
    const error = await post(trusting, [logo(`${cdn.url}/nothing-here.png`)]);
    expectError(error, 422, 'IMAGE_UNREACHABLE');

    // Local paths, as README and docs/settings.md say: on loopback without --source-root any readable file; with
    // --source-root only files under it; beyond loopback, only files under a --source-root.
    const rooted = await open(serverSourcePolicy('127.0.0.1', { sourceRoots: [path.join(path.dirname(red), 'elsewhere')] }));
    expectError(await post(rooted, [logo(red)]), 403, 'SOURCE_PATH_FORBIDDEN');
    const onLoopback = await open(serverSourcePolicy('127.0.0.1'));
    expect([200, 201]).toContain((await post(onLoopback, [logo(red)])).status);
    const beyond = await open(serverSourcePolicy('0.0.0.0', { sourceRoots: [path.dirname(red)] }));
    expect([200, 201]).toContain((await post(beyond, [logo(red)])).status);
    await Promise.all(queues.map((q) => q.close()));
  });
});
