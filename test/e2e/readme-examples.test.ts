// Every command in README.md's shell blocks runs as printed, block by block in the README's order, read from the
// README itself: a changed command is run as changed. The blocks share one world (test/helpers/examples.ts), as a
// reader goes on from one to the next; the forensic block has one of its own, whose movie.mp4 lasts the 5 minutes a
// forensic ingest needs. The few commands that cannot run here are SKIPPED, each with its reason.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flat, natural, REPO } from '../../harness/fixtures.js';
import { Block, openWorld, readmeBlocks, SKIPPED, skipReason, TEXT_FILES, type World } from '../helpers/examples.js';

const blocks = readmeBlocks(readFileSync(path.join(REPO, 'README.md'), 'utf8'));
const isForensic = (heading: string) => /forensic/i.test(heading);

let world: World;
let forensicWorld: World | undefined;

beforeAll(async () => {
  const [movie, recut] = await Promise.all([flat('336699', 4), flat('993366', 4)]);
  world = await openWorld({ label: 'readme-examples', files: { 'movie.mp4': movie, 'recut.mp4': recut, ...TEXT_FILES } });
}, 600_000);

afterAll(async () => {
  await world?.close();
  await forensicWorld?.close();
});

describe("README.md's commands run as printed", () => {
  it('finds the blocks and their commands (the reader of the README works)', () => {
    expect(blocks.map((b) => b.heading)).toEqual(expect.arrayContaining(['Quick start', 'Using it', 'Remote mode', 'Running a render farm']));
    const farm = blocks.find((b) => b.heading === 'Running a render farm')!;
    // Continuation lines are one command; comment lines are none.
    expect(
      farm.commands.some((c) => /^wmark --data-dir \/srv\/wmark serve --host 0\.0\.0\.0 --public-url \S+ --queue \S+ --media \S+ --s3-endpoint \S+$/.test(c)),
    ).toBe(true);
    expect(farm.commands.every((c) => !c.startsWith('#'))).toBe(true);
  });

  for (const [i, { heading, commands }] of blocks.entries()) {
    it(`${heading} (block ${i + 1})`, async () => {
      let w = world;
      if (isForensic(heading)) {
        forensicWorld ??= await openWorld({ label: 'readme-forensic', files: { 'movie.mp4': await natural(300), ...TEXT_FILES } });
        w = forensicWorld;
      }
      const block = new Block(w);
      try {
        for (const command of commands) {
          if (skipReason(command)) continue;
          await block.run(command);
        }
      } finally {
        await block.end();
      }
    }, 1_500_000);
  }

  it('skips only the commands of SKIPPED, which install packages or run the development loop', () => {
    const skipped = blocks.flatMap((b) => b.commands).filter((c) => skipReason(c));
    expect(
      skipped.every((c) => /^(npm|npx vitest)\b/.test(c)),
      skipped.join('\n'),
    ).toBe(true);
    expect(SKIPPED.every((s) => s.reason.length > 20)).toBe(true);
  });
});
