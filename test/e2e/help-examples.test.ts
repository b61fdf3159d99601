// Every example `--help` shows runs as printed. The examples are read from the table the help prints
// (src/cli/help-examples.ts), in the order of the commands, each in one world (test/helpers/examples.ts): a generated
// movie.mp4 and the other files they name, a temp data folder and config folder, and on loopback the remote service,
// Redis and an S3 stand-in. A changed example is run as changed; one that stops working fails here.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flat, natural } from '../../harness/fixtures.js';
import { EXAMPLES } from '../../src/cli/help-examples.js';
import { Block, openWorld, skipReason, TEXT_FILES, type World } from '../helpers/examples.js';

let world: World;

beforeAll(async () => {
  const [movie, recut, clip, film] = await Promise.all([flat('336699', 4), flat('993366', 4), flat('669933', 4), natural(300)]);
  world = await openWorld({
    label: 'help-examples',
    files: { 'movie.mp4': movie, 'recut.mp4': recut, 'clip.mp4': clip, 'long-film.mp4': film, ...TEXT_FILES },
  });
  // The reader of `--remote` examples has logged in once (`wmark auth login`, an example of its own below).
  const login = await new Block(world).shell(
    `WMARK_CLIENT_ID=${world.remote.clientId} WMARK_API_KEY=${world.remote.apiKey} wmark auth login --remote ${world.remote.url}`,
  );
  expect(login.code, login.stderr).toBe(0);
}, 600_000);

afterAll(async () => {
  await world?.close();
});

describe('every --help example runs as printed', () => {
  // Root first, then each command in the help's order: later examples use what earlier ones made (movie, a watermark).
  for (const [path, examples] of Object.entries(EXAMPLES)) {
    it(`wmark ${path ? `${path} ` : ''}--help`, async () => {
      const block = new Block(world);
      try {
        for (const example of examples) {
          if (skipReason(example)) continue;
          await block.run(example);
        }
      } finally {
        await block.end();
      }
    }, 1_200_000);
  }

  it('the --open examples handed the player link to the browser', () => {
    const opened = readFileSync(world.opened, 'utf8').trim().split('\n');
    expect(opened.length).toBeGreaterThanOrEqual(2);
    for (const link of opened) expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/player\/2\.0\/\?/);
  });

  it('only what needs outside infrastructure is skipped, each for a reason', () => {
    const skipped = Object.values(EXAMPLES)
      .flat()
      .filter((e) => skipReason(e));
    expect(skipped.length).toBeLessThanOrEqual(1);
    for (const e of skipped) expect(skipReason(e), e).toMatch(/zsh/);
  });
});
