// README.md's "Use it from code" example runs as printed, read from the README itself: a program in a folder of its
// own that imports 'wmark' as an installed package (the built entry, through package.json's exports map). Without
// WMARK_API_URL it uses the embedded engine; with it, `wmark serve` on loopback. Both print READY and a playlist whose
// frames carry the text where the example puts it.
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, sandbox, startCommand } from '../../harness/cli-helpers.js';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { flat, REPO } from '../../harness/fixtures.js';
import { serveEngine, type TestServer } from '../../harness/serve-helpers.js';
import { decodeFrame } from '../helpers/media.js';
import { colourBox, SMALL } from '../helpers/watermark-helpers.js';

const readme = readFileSync(path.join(REPO, 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('### Use it from code'));
const example = /```ts\n([\s\S]*?)\n```/.exec(section)?.[1];

let box: Sandbox;
const servers: { server: TestServer; engine: TestEngine }[] = [];

beforeAll(async () => {
  box = sandbox('readme-library');
  copyFileSync(await flat('336699', 4), path.join(box.cwd, 'movie.mp4'));
  // As `npm install wmark` would leave it: the package under node_modules, its own dependencies beside it.
  mkdirSync(path.join(box.cwd, 'node_modules'));
  symlinkSync(REPO, path.join(box.cwd, 'node_modules', 'wmark'), 'dir');
  writeFileSync(path.join(box.cwd, 'example.mjs'), example ?? '');
});
afterAll(async () => {
  for (const { server, engine } of servers) {
    await server.close();
    await engine.dispose();
  }
  box?.dispose();
});

async function serve(dataDir?: string): Promise<TestServer> {
  const engine = await testEngine(dataDir ? { dataDir } : {});
  const server = await serveEngine(engine);
  servers.push({ server, engine });
  return server;
}

/** Runs the example with exactly these variables (and PATH, HOME); its one line of output: status and playlist. */
async function runExample(env: Record<string, string>): Promise<{ status: string; m3u8: URL }> {
  const base = { PATH: process.env.PATH!, HOME: process.env.HOME!, WMARK_CONFIG_DIR: box.configDir };
  const run = await startCommand(process.execPath, ['example.mjs'], { env: { ...base, ...env }, cwd: box.cwd }).done;
  expect(run.code, run.stderr).toBe(0);
  const [status, m3u8] = run.stdout.trim().split(' ');
  return { status: status!, m3u8: new URL(m3u8!) };
}

/** The example's text: light, at the bottom right of the frame. */
async function expectBottomRightText(m3u8: string): Promise<void> {
  const text = colourBox(await decodeFrame(m3u8, 1, SMALL), [255, 255, 255], 60);
  expect(text).toBeDefined();
  expect(text!.x1).toBeLessThanOrEqual(Math.ceil(0.97 * SMALL.width) + 2);
  expect([text!.x0 > SMALL.width / 3, text!.y0 > SMALL.height / 2]).toEqual([true, true]);
}

describe("README's library example runs as printed", () => {
  it('is found in the README, and imports the package by name', () => {
    expect(example).toContain("from 'wmark'");
  });

  it('on the embedded engine of WMARK_HOME', async () => {
    const { status, m3u8 } = await runExample({ WMARK_HOME: box.dataDir });
    expect(status).toBe('READY');
    // The links name where `wmark serve` would listen; one serving this data folder plays them.
    const server = await serve(box.dataDir);
    await expectBottomRightText(new URL(m3u8.pathname + m3u8.search, server.url).href);
  });

  it('on wmark serve, with WMARK_API_URL, WMARK_CLIENT_ID and WMARK_API_KEY', async () => {
    const server = await serve();
    const { status, m3u8 } = await runExample({
      WMARK_HOME: path.join(box.root, 'unused'),
      WMARK_API_URL: server.url,
      WMARK_CLIENT_ID: server.cred.clientId,
      WMARK_API_KEY: server.cred.apiKey,
    });
    expect([status, m3u8.origin]).toEqual(['READY', server.url]);
    await expectBottomRightText(m3u8.href);
  });
});
