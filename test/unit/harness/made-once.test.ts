// Shared fixtures are made once across parallel test workers: callers that find the lock wait for the file instead
// of making it again, and a lock left by a process that is gone is taken over.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { madeOnce, tempDir } from '../../../harness/fixtures.js';

describe('madeOnce', () => {
  it('makes the file once however many callers ask at the same time, and hands each the file', async () => {
    const file = path.join(tempDir('made-once'), 'clip.mp4');
    let makes = 0;
    const make = async () => {
      makes++;
      await new Promise((resolve) => setTimeout(resolve, 300));
      await writeFile(file, 'made');
      return file;
    };
    const got = await Promise.all([madeOnce(file, make), madeOnce(file, make), madeOnce(file, make)]);
    expect(got).toEqual([file, file, file]);
    expect(makes).toBe(1);
    expect(readFileSync(file, 'utf8')).toBe('made');
  });

  it('takes over a lock whose owner process is gone', async () => {
    const file = path.join(tempDir('made-once'), 'clip.mp4');
    mkdirSync(`${file}.lock`);
    // Pid 2^22 + 1 is above Linux's pid_max, so no process has it.
    writeFileSync(path.join(`${file}.lock`, 'pid'), String(2 ** 22 + 1));
    const got = await madeOnce(file, async () => {
      await writeFile(file, 'made');
      return file;
    });
    expect(readFileSync(got, 'utf8')).toBe('made');
  });
});
