// The engine keeps its state through the StateStore interface: a store handed to openEngine is the only one it uses.
import { existsSync, rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createTemplate, getTemplate } from '../../src/engine/app/templates.js';
import { type Engine, openEngine } from '../../src/engine/engine.js';
import { SqliteStateStore } from '../../src/engine/state/sqlite-state-store.js';
import type { StateStore } from '../../src/engine/state/state-store.js';
import { tempDir } from '../helpers/fixtures.js';

let engine: Engine | undefined;
let dataDir: string | undefined;
afterEach(async () => {
  await engine?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  engine = dataDir = undefined;
});

/** A store that records the name of every call made on it, and forwards it to `inner`. */
function recording(inner: StateStore): { store: StateStore; calls: string[] } {
  const calls: string[] = [];
  const store = new Proxy(inner, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(String(name));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, calls };
}

describe('openEngine with a state store of its own', () => {
  it('keeps templates in the given store, opens no SQLite file of its own, and closes the store with the engine', async () => {
    dataDir = tempDir('state-store');
    const { store, calls } = recording(new SqliteStateStore(':memory:'));
    engine = await openEngine({ dataDir, workers: 1, encode: { preset: 'veryfast', crf: 23 }, store });

    const created = await createTemplate(engine, { name: 'corner', settings: [{ content: 'viewer %name%' }] });
    expect(await getTemplate(engine, created.id)).toMatchObject({ id: created.id, name: 'corner' });
    expect((await store.getTemplate(created.id))?.name).toBe('corner');
    expect(calls).toEqual(expect.arrayContaining(['insertTemplate', 'getTemplate']));
    expect(existsSync(engine.paths.db)).toBe(false);

    await engine.close();
    engine = undefined;
    expect(calls.at(-1)).toBe('close');
  });
});
