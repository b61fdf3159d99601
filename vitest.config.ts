import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Projects mirror test/: fast pure unit tests (with bench's own, beside it in bench/test/), integration tests with real ffmpeg/SQLite/HTTP, spawned-CLI e2e, and real-browser tests.
export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    // Band rendering stays off in tests (and the CLIs and serves they spawn), so tests of the full render keep testing
    // it wherever the patched x264 is built; band tests give their engine the x264 themselves.
    env: { WMARK_BAND: process.env.WMARK_BAND ?? 'off' },
    projects: [
      // Unit tests get 30 s, not vitest's 5: the pure detector maths and the first import of the library take 1-3 s
      // alone and passed 5 s on a machine busy with other work, failing a whole run on no fault of theirs. They are
      // pure CPU and start nothing, so they run first, a file per core (vitest's default leaves one core idle, and
      // with it every project runs one file at a time on a 2-core machine); the other projects follow.
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'bench/test/**/*.test.ts'],
          testTimeout: 30_000,
          maxWorkers: availableParallelism(),
          sequence: { groupOrder: 0 },
        },
      },
      // Integration and end-to-end files spend most of their time waiting (on servers, ffmpeg, HTTP, timers), so two
      // run at once: on a 2-core machine vitest's default would run one at a time and leave a core idle for most of
      // the suite. Tests that bound a time (an answer within 5 s while a dependency is down) leave room for the file
      // beside them. The browser and slow projects run their files one at a time, so each has a group of its own.
      { extends: true, test: { name: 'integration', sequence: { groupOrder: 1 }, maxWorkers: 2, include: ['test/integration/**/*.test.ts'], pool: 'forks', testTimeout: 120_000, hookTimeout: 180_000 } },
      { extends: true, test: { name: 'e2e', sequence: { groupOrder: 1 }, maxWorkers: 2, include: ['test/e2e/**/*.test.ts'], pool: 'forks', testTimeout: 120_000, hookTimeout: 180_000 } },
      { extends: true, test: { name: 'browser', sequence: { groupOrder: 2 }, include: ['test/browser/**/*.test.ts'], pool: 'forks', testTimeout: 180_000, hookTimeout: 180_000, fileParallelism: false } },
      // Long or statistical tests (10,000 null trials, camcorder runs, long titles): only with WMARK_SLOW=1.
      ...(process.env.WMARK_SLOW === '1'
        ? [{ extends: true as const, test: { name: 'slow', sequence: { groupOrder: 3 }, include: ['test/slow/**/*.test.ts'], pool: 'forks' as const, testTimeout: 1_800_000, hookTimeout: 1_800_000, fileParallelism: false } }]
        : []),
    ],
  },
});
