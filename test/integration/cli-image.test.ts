// `wmark watermark --image`: a logo from a relative path or a URL placed by the position flags, sized by --image-width
// and faded by --image-opacity; text and a logo together from --settings and from a template whose logo URL is a
// placeholder; and the flag errors (exit 2, naming the flag). Measured on decoded frames of the CLI's output.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli.js';
import { flat, tempDir } from '../../harness/fixtures.js';
import { fixtureIn, type ImageServer, imageServer, solidImage, transparentPng } from '../helpers/images.js';
import { decodeFrame, type RgbFrame } from '../helpers/media.js';
import { blend, colourBox, maxChannelDiff, meanRgb, type Rgb, SMALL } from '../helpers/watermark-helpers.js';

const KEY = 'cli-logo';
const BG: Rgb = [0x33, 0x66, 0x99];
const RED: Rgb = [255, 0, 0];
const GREEN: Rgb = [0, 255, 0];

let dir: string;
let cdn: ImageServer;
let env: Record<string, string>;
const cli = (argv: string[]) => runCli(['--json', '--data-dir', path.join(dir, 'data'), ...argv], { env, cwd: dir });

beforeAll(async () => {
  dir = tempDir('cli-image');
  env = { WMARK_CONFIG_DIR: path.join(dir, 'config') };
  cdn = await imageServer();
  // 64x32 red and 32x32 green: at 0.2 and 0.1 of a 320-px frame they keep their own size.
  solidImage(fixtureIn(dir, 'red.png'), 'FF0000', 64, 32);
  transparentPng(fixtureIn(dir, 'clear.png'));
  cdn.serve('/green.png', solidImage(fixtureIn(dir, 'green.png'), '00FF00', 32, 32));
  const ingest = await cli(['ingest', await flat('336699', 4), '--key', KEY]);
  expect(ingest.code, ingest.stderr).toBe(0);
});
afterAll(async () => await cdn?.close());

/** Runs a watermark command and decodes its HLS output at 1 s. */
async function frameOf(argv: string[]): Promise<RgbFrame> {
  const r = await cli(['watermark', '--key', KEY, '--containers', 'm3u8', ...argv]);
  expect(r.code, r.stderr).toBe(0);
  const w = r.json<{ status: string; files: { m3u8: string } }>();
  expect(w.status).toBe('READY');
  return await decodeFrame(w.files.m3u8, 1, SMALL);
}

function boxOf(frame: RgbFrame, colour: Rgb) {
  const b = colourBox(frame, colour, 60);
  if (!b) throw new Error(`no ${colour.join(',')} logo in the frame`);
  return b;
}

describe('--image', () => {
  it('draws a local file named relative to the working folder where the position flags put it, at its own size', async () => {
    const frame = await frameOf(['--image', 'red.png', '--x', '0.1', '--y', '0.2', '--align', 'LEFT', '--vertical-align', 'TOP']);
    const b = boxOf(frame, RED);
    expect([b.x0, b.y0, b.x1 - b.x0 + 1, b.y1 - b.y0 + 1]).toEqual([32, 36, 64, 32]);
    expect(b.count).toBe(64 * 32);
  });

  it('a URL, --image-width scales it keeping the aspect, --image-opacity blends it', async () => {
    const frame = await frameOf(['--image', `${cdn.url}/green.png`, '--image-width', '0.25', '--image-opacity', '0.5', '--x', '0.5', '--y', '0.5']);
    // 0.25 of 320 = 80 px wide, 80 px high (square); centred on (160, 90).
    const inner = { x0: 130, y0: 60, x1: 189, y1: 119 };
    expect(maxChannelDiff(meanRgb(frame, inner), blend(BG, GREEN, 0.5))).toBeLessThanOrEqual(12);
    const b = colourBox(frame, blend(BG, GREEN, 0.5), 30);
    expect(b).toBeDefined();
    expect(Math.abs(b!.x1 - b!.x0 + 1 - 80)).toBeLessThanOrEqual(2);
    expect(Math.abs(b!.y1 - b!.y0 + 1 - 80)).toBeLessThanOrEqual(2);
    expect(maxChannelDiff(meanRgb(frame, { x0: 10, y0: 10, x1: 40, y1: 40 }), BG)).toBeLessThanOrEqual(6);
  });

  it('text and a logo together from --settings, the later on top', async () => {
    const settings = path.join(dir, 'both.json');
    writeFileSync(
      settings,
      JSON.stringify([
        { type: 'IMAGE', content: path.join(dir, 'red.png'), x: 0.5, y: 0.5 },
        { type: 'IMAGE', content: `${cdn.url}/green.png`, x: 0.5, y: 0.5, width: 0.05 },
        { content: 'for alice', x: 0.5, y: 0.9, fontOpacity: 1, fontSize: 0.1 },
      ]),
    );
    const frame = await frameOf(['--settings', settings]);
    const red = boxOf(frame, RED);
    const green = boxOf(frame, GREEN);
    // The 16x16 green on top of the red's middle; the text drawn below them.
    expect([green.x1 - green.x0 + 1, green.y1 - green.y0 + 1]).toEqual([16, 16]);
    expect(green.x0).toBe(152);
    expect(red.count).toBe(64 * 32 - 16 * 16);
    const text = colourBox(frame, [255, 255, 255], 60);
    expect(text).toBeDefined();
    expect(text!.y0).toBeGreaterThan(red.y1);
  });

  it("a template's logo URL is a placeholder filled by --map", async () => {
    const file = path.join(dir, 'branded.json');
    writeFileSync(
      file,
      JSON.stringify({ name: 'branded', settings: [{ type: 'IMAGE', content: '[%logo%]', x: 0.9, y: 0.1, align: 'RIGHT', verticalAlign: 'TOP' }] }),
    );
    const created = await cli(['template', 'create', file]);
    expect(created.code, created.stderr).toBe(0);
    const id = created.json<{ id: string }>().id;
    const frame = await frameOf(['--template', id, '--map', `logo=${cdn.url}/green.png`]);
    // The default width, 0.2 of the frame: 64x64, its top right corner at (288, 18).
    const g = boxOf(frame, GREEN);
    expect([g.x0, g.y0, g.x1, g.y1]).toEqual([288 - 64, 18, 287, 18 + 63]);
  });
});

describe('a local image file stands for its content', () => {
  it('the same bytes again are the same watermark; an edited file under the same name is a new one, drawn as it is now', async () => {
    const logo = fixtureIn(dir, 'edited.png');
    const argv = ['watermark', '--key', KEY, '--containers', 'm3u8', '--image', 'edited.png', '--x', '0.5', '--y', '0.5'];
    solidImage(logo, 'FF0000', 32, 32);
    const first = await cli(argv);
    expect(first.code, first.stderr).toBe(0);
    const again = await cli(argv);
    expect(again.json()).toMatchObject({ id: first.json().id, created: false });
    solidImage(logo, '00FF00', 32, 32);
    const edited = await cli(argv);
    expect(edited.code, edited.stderr).toBe(0);
    const w = edited.json<{ id: string; created: boolean; files: { m3u8: string } }>();
    expect(w.id).not.toBe(first.json().id);
    expect(w.created).toBe(true);
    const frame = await decodeFrame(w.files.m3u8, 1, SMALL);
    // At the default width, 0.2 of the frame: 64x64, all of it green.
    expect(boxOf(frame, GREEN).count).toBe(64 * 64);
  });
});

describe('watermark list', () => {
  it('names each logo: its source in JSON, its file name in the table', async () => {
    const listed = await cli(['watermark', 'list', '--key', KEY]);
    expect(listed.code, listed.stderr).toBe(0);
    const rows = listed.json<{ text: string | null; images: string[] }[]>();
    const logoOnly = rows.filter((r) => r.text === null);
    expect(logoOnly.map((r) => r.images)).toEqual(expect.arrayContaining([[path.join(dir, 'red.png')], [`${cdn.url}/green.png`]]));
    const table = await runCli(['--data-dir', path.join(dir, 'data'), 'watermark', 'list', '--key', KEY], { env, cwd: dir });
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain('(image red.png)');
    expect(table.stdout).toContain('(image green.png)');
    expect(table.stdout).not.toContain(cdn.url);
  });
});

describe('flag errors exit 2 naming the flag', () => {
  it.each([
    { argv: ['--image', 'red.png', '--text', 'hi'], code: 'SETTINGS_CONFLICT', text: '--text or --image' },
    { argv: ['--image', 'red.png', '--font-size', '0.1'], code: 'SETTINGS_CONFLICT', text: '--font-size' },
    { argv: ['--text', 'hi', '--image-width', '0.1'], code: 'SETTINGS_CONFLICT', text: '--image-width: image flags need --image' },
    { argv: ['--image', 'red.png', '--image-width', '2'], code: 'SETTINGS_INVALID', text: '--image-width' },
    { argv: ['--image', 'red.png', '--image-opacity', '-1'], code: 'SETTINGS_INVALID', text: '--image-opacity' },
    { argv: ['--image', 'missing.png'], code: 'IMAGE_UNREACHABLE', text: 'missing.png' },
    { argv: ['--image', 'clear.png'], code: 'IMAGE_INVISIBLE', text: 'clear.png is fully transparent' },
  ])('$argv.0 $argv.1 $argv.2 $argv.3: $code', async ({ argv, code, text }) => {
    const r = await cli(['watermark', '--key', KEY, ...argv]);
    expect(r.code, r.stdout).toBe(2);
    const error = r.json<{ error: { code: string; message: string; details?: string[] } }>().error;
    expect(error.code).toBe(code);
    expect([error.message, ...(error.details ?? [])].join('\n')).toContain(text);
  });
});
