// Where an engine's secret comes from: the operator's, a database's shared one (stored by the first opener), or the
// data folder's file; and a clear refusal of one that is malformed or differs from the one in use.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../../harness/fixtures.js';
import { isWmarkError } from '../../../src/core/errors.js';
import { resolveSecret } from '../../../src/engine/data-folder/secret.js';
import { ChangeFeed } from '../../../src/engine/jobs/change-feed.js';
import type { ChangeBus } from '../../../src/engine/state/state-store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function secretFile(): string {
  const dir = tempDir('secret');
  dirs.push(dir);
  return path.join(dir, 'secret.key');
}
const b64 = (b: Buffer) => b.toString('base64url');

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isWmarkError(error)) throw new Error(`expected a WmarkError, got ${String(error)}`);
  return error;
}

describe('resolveSecret', () => {
  it('creates the data folder file once (mode 0600) and reads the same secret back', async () => {
    const file = secretFile();
    const first = await resolveSecret({ file });
    expect(first.length).toBe(32);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect((await resolveSecret({ file })).equals(first)).toBe(true);
  });

  it("uses the operator's secret without writing a file, and refuses one that differs from the file in use", async () => {
    const file = secretFile();
    const given = randomBytes(48);
    expect((await resolveSecret({ file, given: b64(given) })).equals(given)).toBe(true);
    expect(existsSync(file)).toBe(false);
    writeFileSync(file, `${b64(randomBytes(32))}\n`);
    const r = await refusal(resolveSecret({ file, given: b64(given) }));
    expect(r.code).toBe('CONFIG_INVALID');
    expect(r.message).toContain(`does not match the one in use: ${file} holds a different one`);
  });

  it.each([
    ['too short', b64(randomBytes(16))],
    ['not base64url', `${'!'.repeat(43)}`],
    [
      'base64 with + and /',
      randomBytes(33)
        .toString('base64')
        .replace(/[A-Za-z0-9]/, '+'),
    ],
  ])('refuses a malformed operator secret (%s) by name, without echoing it', async (_, given) => {
    const r = await refusal(resolveSecret({ file: secretFile(), given }));
    expect(r.code).toBe('CONFIG_INVALID');
    expect(r.message).toBe('the configured secret (config `secret` or WMARK_SECRET) is not a valid secret: expected 32 or more bytes, base64url');
  });

  it("offers the data folder's existing secret to the database, and takes what the database holds", async () => {
    const file = secretFile();
    const folder = randomBytes(32);
    writeFileSync(file, `${b64(folder)}\n`);
    const held = randomBytes(32);
    const offered: string[] = [];
    // An empty database stores the offer; one that holds a secret keeps its own.
    const database = (holds?: Buffer) => async (candidate: string) => {
      offered.push(candidate);
      return holds ? b64(holds) : candidate;
    };
    expect((await resolveSecret({ file, shared: database() })).equals(folder)).toBe(true);
    expect((await resolveSecret({ file, shared: database(held) })).equals(held)).toBe(true);
    expect(offered).toEqual([b64(folder), b64(folder)]);
    expect(readFileSync(file, 'utf8').trim()).toBe(b64(folder));
    // Without a file, a fresh random secret is offered and no file is made.
    const none = secretFile();
    const fresh = await resolveSecret({ file: none, shared: async (c) => c });
    expect(fresh.length).toBe(32);
    expect(existsSync(none)).toBe(false);
  });
});

describe('ChangeFeed over a bus', () => {
  /** Two feeds on one in-memory bus that, like a database's notices, delivers every message to every listener. */
  function pair() {
    const listeners: ((m: string) => void)[] = [];
    const bus = (): ChangeBus => {
      let mine: ((m: string) => void) | undefined;
      return {
        publish: (m) => {
          for (const l of listeners) l(m);
        },
        listen: (l) => {
          if (mine) return;
          mine = l;
          listeners.push(l);
        },
        close: async () => undefined,
      };
    };
    return [new ChangeFeed(bus()), new ChangeFeed(bus())] as const;
  }

  it("delivers one feed's notices to the other's watchers of that topic, and each watcher once", () => {
    const [a, b] = pair();
    const heard: string[] = [];
    b.subscribe('watermark:w1', () => heard.push('b w1'));
    b.subscribe('watermark:w1', () => heard.push('b w1 again'));
    a.subscribe('watermark:w1', () => heard.push('a w1'));
    b.subscribe('video:v1', () => heard.push('b v1'));
    a.notify('watermark:w1');
    expect(heard).toEqual(['a w1', 'b w1', 'b w1 again']);
    expect(a.crossProcess && b.crossProcess).toBe(true);
    expect(new ChangeFeed().crossProcess).toBe(false);
  });

  it('ignores messages that are not notices', () => {
    const [a, b] = pair();
    const heard: string[] = [];
    b.subscribe('watermark:w1', () => heard.push('b'));
    for (const m of ['', 'x', 'origin', 'origin watermark:', 'origin other:w1', 'origin newListener']) (a as unknown as { bus: ChangeBus }).bus.publish(m);
    expect(heard).toEqual([]);
  });
});
