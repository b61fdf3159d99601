// A newcomer's path through the CLI in-process: clear refusals (off-frame text, a key in use, a busy port), --replace.
import { existsSync, readdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliIn, sandbox, type Sandbox } from '../helpers/cli-helpers.js';
import { flat } from '../helpers/fixtures.js';

let box: Sandbox;
let cli: ReturnType<typeof cliIn>;
let clipA: string;
let clipB: string;

beforeAll(async () => {
  box = sandbox('newcomer');
  cli = cliIn(box);
  [clipA, clipB] = await Promise.all([flat('336699', 4), flat('993366', 4)]);
  const r = await cli(['ingest', clipA, '--key', 'clip-1']);
  expect(r.code, r.stderr).toBe(0);
});

afterAll(() => box?.dispose());

describe('clear refusals', () => {
  it('text wholly outside the frame is refused with exit 2 naming the field, before anything is rendered', async () => {
    const r = await cli(['watermark', '--key', 'clip-1', '--text', 'lost', '--x', '2']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^error: settings\[0\]\.x: the text at x 2, y 0.5 lies wholly outside the frame/m);
    expect(r.stderr).toContain('320x180');
    const json = await cli(['--json', 'watermark', '--key', 'clip-1', '--text', 'lost', '--y', '-1', '--vertical-align', 'BOTTOM']);
    expect(json.code).toBe(2);
    expect(json.json().error).toMatchObject({ code: 'VALIDATION_FAILED', details: [expect.stringMatching(/^settings\[0\]\.y: /)] });
  });

  it('another source under a key in use is KEY_EXISTS (exit 2) with a hint naming --replace', async () => {
    const r = await cli(['--json', 'ingest', clipB, '--key', 'clip-1']);
    expect(r.code).toBe(2);
    expect(r.json().error).toMatchObject({ code: 'KEY_EXISTS', message: `the key "clip-1" already names another source (${clipA})` });
    expect(r.json().error.hint).toContain('--replace');
  });

  it('--replace forgets the old video, its watermarks and their files, and ingests the new source under the key', async () => {
    const made = await cli(['--json', 'watermark', '--key', 'clip-1', '--text', 'for alice', '--containers', 'm3u8']);
    expect(made.code, made.stderr).toBe(0);
    const old = made.json() as { id: string; videoId: string };
    const oldFiles = path.join(box.dataDir, 'media', 'watermarks', old.videoId);
    expect(readdirSync(oldFiles)).toContain(old.id);

    // A source that cannot be read leaves everything as it was.
    const missing = await cli(['ingest', path.join(box.cwd, 'nope.mp4'), '--key', 'clip-1', '--replace']);
    expect(missing.code).toBe(2);
    expect(readdirSync(oldFiles)).toContain(old.id);

    const r = await cli(['ingest', clipB, '--key', 'clip-1', '--replace']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`warning: replaced video ${old.videoId} (${clipA}) and its 1 watermark(s), whose links no longer play`);
    const videos = (await cli(['--json', 'video', 'list'])).json() as { id: string; key: string; sourceUrl: string; status: string }[];
    expect(videos).toHaveLength(1);
    expect(videos[0]).toMatchObject({ key: 'clip-1', sourceUrl: clipB, status: 'INGESTED' });
    expect(videos[0]!.id).not.toBe(old.videoId);
    expect(existsSync(oldFiles)).toBe(false);
    expect(existsSync(path.join(box.dataDir, 'media', 'videos', old.videoId))).toBe(false);
    // The same text on the new video is a new watermark, rendered again.
    const again = await cli(['--json', 'watermark', '--key', 'clip-1', '--text', 'for alice', '--containers', 'm3u8']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.json()).toMatchObject({ created: true, videoId: videos[0]!.id });
  });

  it('--replace with --remote is refused: the service API has no replace', async () => {
    const r = await cli(['ingest', clipB, '--key', 'clip-1', '--replace', '--remote', 'http://127.0.0.1:9']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--replace applies to the local engine');
  });

  it('serve on a busy port says so and suggests --port 0 (exit 2); --port abc is a usage error too', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      const r = await cli(['serve', '--port', String(port)]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`error: port ${port} on 127.0.0.1 is already in use`);
      expect(r.stderr).toContain('--port 0');
      expect(r.stderr).not.toContain('unexpected');
      const json = await cli(['--json', 'serve', '--port', String(port)]);
      expect(json.code).toBe(2);
      expect(json.json().error.code).toBe('PORT_IN_USE');
    } finally {
      holder.close();
    }
    for (const bad of ['abc', '70000', '-1']) {
      const r = await cli(['--json', 'serve', '--port', bad]);
      expect(r.code, bad).toBe(2);
      expect(r.json().error).toMatchObject({ code: 'BAD_FLAG', message: expect.stringContaining('--port') });
    }
  });
});
