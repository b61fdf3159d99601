// A real engine (SQLite file, media folders, ffmpeg) in a throwaway data dir, with a counting process runner.
import { rmSync } from 'node:fs';
import { openEngine, type Engine } from '../../src/engine/engine.js';
import { tempDir } from './fixtures.js';
import { countingRunner, type CountingRunner } from './tools.js';

export interface TestEngine extends Engine {
  runner: CountingRunner;
  dataDir: string;
  dispose(): void;
}

export function testEngine(options: { dataDir?: string; workers?: number; now?: () => number } = {}): TestEngine {
  const dataDir = options.dataDir ?? tempDir('engine');
  const runner = countingRunner();
  const engine = openEngine({ dataDir, workers: options.workers ?? 2, encode: { preset: 'veryfast', crf: 23 }, runner, now: options.now });
  return Object.assign(engine, {
    runner,
    dataDir,
    dispose() {
      engine.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  });
}
