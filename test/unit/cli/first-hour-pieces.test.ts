// The pure pieces of a newcomer's first hour: the default video key, flag errors in one wording, progress in words
// that say what happens, human dates, doc pointers that resolve from the installed package, and the forensic layouts'
// figures as docs/forensic.md measures them.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Chalk } from 'chalk';
import { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { REPO } from '../../../harness/fixtures.js';
import { docPath, resolveDocRefs } from '../../../src/cli/docs.js';
import { FlagError, flagError, fromCommanderError, numberFlag } from '../../../src/cli/flag-error.js';
import { describeWatermark } from '../../../src/cli/follow.js';
import { humanDate, renderWatermark } from '../../../src/cli/render.js';
import { FORENSIC_LAYOUT_TRADES, forensicStage } from '../../../src/core/forensic/variant-plan.js';
import { FORENSIC_LAYOUTS } from '../../../src/core/forensic-layout.js';
import { defaultVideoKey } from '../../../src/core/video-key.js';

describe('the default key of `wmark ingest`: the file name without its extension', () => {
  it.each([
    ['/films/movie.mp4', 'movie'],
    ['movie.mp4', 'movie'],
    ['./cuts/clip20.MP4', 'clip20'],
    ['/films/trailer.final.mov', 'trailer.final'],
    ['https://cdn.example.com/films/movie.mp4?token=abc', 'movie'],
    ['https://cdn.example.com/a%20b.mp4', 'a b'],
    ['https://cdn.example.com/%E0%A4%A.mp4', '%E0%A4%A'],
  ])('%s -> %s', (source, key) => expect(defaultVideoKey(source)).toBe(key));

  it('falls back to the source itself when no name is left', () => {
    for (const source of ['https://cdn.example.com/', '/films/.mp4']) expect(defaultVideoKey(source)).toBe(source);
  });
});

describe('flag errors', () => {
  it('read "--flag: expected <what>, got "<value>"" with a hint naming the help of the command', () => {
    const e = flagError('--x', 'a number', 'abc');
    expect(e).toMatchObject({ code: 'BAD_FLAG', message: '--x: expected a number, got "abc"', hint: 'See --help for what --x takes.', exitCode: 2 });
    expect(e.inCommand('watermark').hint).toBe('See `wmark watermark --help` for what --x takes.');
    // A hint of its own is kept.
    expect(flagError('--map', 'name=value', 'x', { hint: 'e.g. --map name=Alice' }).inCommand('watermark').hint).toBe('e.g. --map name=Alice');
    expect(() => numberFlag('--y', 'watermark')('0.5x')).toThrow(FlagError);
    expect(numberFlag('--y')('0.25')).toBe(0.25);
  });

  it("commander's own usage errors get the same words and a hint", () => {
    const program = new Command('wmark').exitOverride();
    program.configureOutput({ writeErr: () => undefined, outputError: () => undefined });
    program
      .command('watermark')
      .option('--key <key>')
      .addOption(new Option('--api <version>').choices(['1.0', '2.0']));
    const caught = (argv: string[]) => {
      try {
        program.parse(argv, { from: 'user' });
      } catch (error) {
        return fromCommanderError(error as never, 'watermark');
      }
      throw new Error('no error');
    };
    expect(caught(['watermark', '--api', '3.0'])).toMatchObject({ code: 'BAD_FLAG', message: '--api: expected 1.0 or 2.0, got "3.0"' });
    expect(caught(['watermark', '--api', '3.0']).hint).toBe('See `wmark watermark --help` for what --api takes.');
    expect(caught(['watermark', '--key'])).toMatchObject({ code: 'USAGE', hint: 'See `wmark watermark --help` for what --key takes.' });
    expect(caught(['watermark', '--bogus'])).toMatchObject({ code: 'USAGE', message: "unknown option '--bogus'", hint: 'See `wmark watermark --help`.' });
  });
});

describe('progress that says what happens', () => {
  it('a watermark that plays while the rest renders is "playable", not READY; the mp4 join has no count', () => {
    expect(describeWatermark({ status: 'READY', stage: 'rendering', done: 0, total: 7, final: false }).detail).toBe('rendering 0/7 segments');
    expect(describeWatermark({ status: 'READY', stage: 'rendering', done: 3, total: 7, final: false }).status).toBe('playable');
    expect(describeWatermark({ status: 'PENDING', stage: 'rendering', done: 0, total: 7, final: false }).status).toBe('PENDING');
    expect(describeWatermark({ status: 'READY', stage: 'joining mp4', done: 7, total: 7, final: false })).toMatchObject({
      status: 'playable',
      detail: 'joining the segments into the mp4',
    });
    expect(describeWatermark({ status: 'READY', final: true })).toEqual({ status: 'READY' });
  });

  it('forensic preparation names the files each segment gets in its layout', () => {
    expect(forensicStage('whole')).toBe('preparing forensic variants aa, ab, ba and bb of each segment');
    expect(forensicStage(null)).toBe(forensicStage('whole'));
    expect(forensicStage('split')).toBe('preparing forensic variants aa, ab, ba and bb of each segment');
    expect(forensicStage('single')).toBe('preparing forensic variants a and b of each segment');
  });

  it("the layouts' figures are docs/forensic.md's table", () => {
    const doc = readFileSync(path.join(REPO, 'docs', 'forensic.md'), 'utf8');
    for (const layout of FORENSIC_LAYOUTS) {
      const row = new RegExp(`^\\| \`${layout}\`[^\\n]*$`, 'm').exec(doc)?.[0];
      expect(row, layout).toBeDefined();
      const cells = row!.split('|').map((c) => c.trim());
      const t = FORENSIC_LAYOUT_TRADES[layout];
      expect(cells[5], layout).toBe(t.bytesPerView);
      expect(cells[6], layout).toBe(t.shortestLeak);
      expect(cells[3], layout).toContain(String(t.files.length));
    }
  });
});

describe('what a rerun says it did', () => {
  const c = new Chalk({ level: 0 });
  it('an existing watermark this run went on rendering counts those segments; one already whole says nothing was encoded', () => {
    const base = { id: 'w1', status: 'READY', created: false };
    expect(renderWatermark({ ...base, resumed: { rendered: 7, total: 11 } }, c).split('\n')[0]).toBe(
      'watermark w1  READY  (resumed: rendered 7 of 11 segments)',
    );
    expect(renderWatermark(base, c).split('\n')[0]).toBe('watermark w1  READY  (existing, nothing encoded)');
  });
});

describe('dates and doc pointers', () => {
  it('a human date is local time to the minute', () => {
    const ms = new Date(2025, 10, 26, 9, 5, 59).getTime();
    expect(humanDate(ms)).toBe('2025-11-26 09:05');
    expect(humanDate(Number.NaN)).toBe('-');
  });

  it("doc references become the installed docs' absolute paths, anchors kept; unknown docs are left as written", () => {
    expect(docPath('api.md')).toBe(path.join(REPO, 'docs', 'api.md'));
    expect(existsSync(docPath('settings.md'))).toBe(true);
    expect(resolveDocRefs('see docs/settings.md#identity-and-expiration.')).toBe(`see ${path.join(REPO, 'docs', 'settings.md')}#identity-and-expiration.`);
    expect(resolveDocRefs('(docs/api.md)')).toBe(`(${path.join(REPO, 'docs', 'api.md')})`);
    expect(resolveDocRefs('docs/nope.md and /abs/docs/api.md')).toBe('docs/nope.md and /abs/docs/api.md');
  });
});
