// The serve helpers that need vitest: error-body expectations and an in-process app per test file; the rest of the
// service's test support (calls, spawning serve, waits) is in harness/serve-helpers.ts, shared with the benches.
import { afterAll, beforeAll, expect } from 'vitest';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { type Reply, serveInProcess, type TestApp } from '../../harness/serve-helpers.js';

/** No stack frames, internal module names or source locations in anything a client can read. */
export function expectNoLeak(text: string): void {
  expect(text).not.toMatch(/\n\s+at\s|node:internal|\bat [\w.<>]+ \(|\.[jt]s:\d+:\d+/);
}

/** A JSON error body `{message, code}` with this status and code; `message` is a non-empty string or array of strings. */
export function expectError(reply: Reply, status: number, code: string): void {
  expect({ status: reply.status, code: reply.json?.code }, reply.text).toEqual({ status, code });
  expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
  const { message } = reply.json as { message: unknown };
  if (Array.isArray(message)) {
    expect(message.length).toBeGreaterThan(0);
    for (const m of message) expect(typeof m).toBe('string');
  } else {
    expect(typeof message).toBe('string');
    expect((message as string).length).toBeGreaterThan(0);
  }
  expectNoLeak(reply.text);
}

/** A fresh engine and in-process app for the whole test file: started before its tests, closed after; `use` gets both. */
export function inProcessAppPerFile(use: (engine: TestEngine, app: TestApp) => void): void {
  let engine: TestEngine | undefined;
  let app: TestApp | undefined;
  beforeAll(async () => {
    engine = await testEngine();
    app = await serveInProcess(engine);
    use(engine, app);
  });
  afterAll(async () => {
    await app?.close();
    await engine?.dispose();
  });
}
