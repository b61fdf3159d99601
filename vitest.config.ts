import { defineConfig } from 'vitest/config';

// Projects mirror test/: fast pure unit tests (with bench's own, beside it in bench/test/), integration tests with real ffmpeg/SQLite/HTTP, spawned-CLI e2e, and real-browser tests.
export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    projects: [
      // Unit tests get 30 s, not vitest's 5: the pure detector maths and the first import of the library take 1-3 s
      // alone and passed 5 s on a machine busy with other work, failing a whole run on no fault of theirs.
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts', 'bench/test/**/*.test.ts'], testTimeout: 30_000 } },
      { extends: true, test: { name: 'integration', include: ['test/integration/**/*.test.ts'], pool: 'forks', testTimeout: 120_000, hookTimeout: 180_000 } },
      { extends: true, test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], pool: 'forks', testTimeout: 120_000, hookTimeout: 180_000 } },
      { extends: true, test: { name: 'browser', include: ['test/browser/**/*.test.ts'], pool: 'forks', testTimeout: 180_000, hookTimeout: 180_000, fileParallelism: false } },
      // Long or statistical tests (10,000 null trials, camcorder runs, long titles): only with WMARK_SLOW=1.
      ...(process.env.WMARK_SLOW === '1'
        ? [{ extends: true as const, test: { name: 'slow', include: ['test/slow/**/*.test.ts'], pool: 'forks' as const, testTimeout: 1_800_000, hookTimeout: 1_800_000, fileParallelism: false } }]
        : []),
    ],
  },
});
