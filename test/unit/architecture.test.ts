// The layer rules of docs/architecture.md as a test: scripts/check-architecture.mjs passes on src/ and the folders
// beside it, and catches a cycle, a forbidden import, a reach through the service and an import between test/ and
// bench/ in small trees made here.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const SCRIPT = path.resolve('scripts/check-architecture.mjs');
const check = (...args: string[]) => spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8' });

describe('architecture check', () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'wmark-arch-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  const tree = (name: string, files: Record<string, string>) => {
    const root = path.join(tmp, name);
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      writeFileSync(path.join(root, file), text);
    }
    return root;
  };
  /** The problems the check finds in a tree of src/ files, one a line; it must fail on them. */
  const problemsIn = (name: string, files: Record<string, string>) => {
    const r = check(tree(name, files));
    expect(r.status).toBe(1);
    return r.stdout.trim().split('\n');
  };

  it('src/ has no import cycle and no import across the layers', () => {
    const r = check('src');
    expect(r.stdout).toMatch(/^no import cycles or layer crossings in \d+ files$/m);
    expect(r.stdout).toMatch(/^no folder loops/m);
    expect(r.status).toBe(0);
  });

  it('the repository keeps test/ and bench/ apart, meeting only in harness/', () => {
    const r = check();
    expect(r.stdout).toMatch(/^no import between test\/ and bench\/, nor from harness\/ into either, in \d+ files$/m);
    expect(r.status).toBe(0);
  });

  it('refuses bench importing test, test importing bench, and harness importing either or vitest', () => {
    // Imports between the fenced folders written out of pieces, so that a grep for them finds none in this file.
    const from = (folder: string, rest: string) => `from '${folder}${rest}'`;
    const root = tree('fences', {
      'src/core/ok.ts': 'export const ok = 1;\n',
      'harness/serve.ts': "import { ok } from '../src/core/ok.js';\nexport const serve = ok;\n",
      'harness/bad.ts': `import { expect } from 'vitest';\nimport { fixture } ${from('../test', '/helpers/fixture.js')};\nexport const bad = () => import('../bench/lib/suite.js');\nexport const e = [expect, fixture];\n`,
      'test/helpers/fixture.ts': "import { serve } from '../../harness/serve.js';\nexport const fixture = serve;\n",
      'test/unit/suite.test.ts': `import { suite } ${from('../../bench', '/lib/suite.js')};\nexport const t = suite;\n`,
      'bench/lib/suite.ts': "import { serve } from '../../harness/serve.js';\nexport const suite = serve;\n",
      'bench/run.ts': `export { fixture } ${from('../test', '/helpers/fixture.js')};\n`,
      'bench/test/suite.test.ts': "import { suite } from '../lib/suite.js';\nexport const t = suite;\n",
    });
    const r = check('--repo', root);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('fence: bench/run.ts imports test/helpers/fixture.ts; bench/ may not import test/');
    expect(r.stdout).toContain('fence: test/unit/suite.test.ts imports bench/lib/suite.ts; test/ may not import bench/');
    expect(r.stdout).toContain('fence: harness/bad.ts imports test/helpers/fixture.ts; harness/ may not import test/');
    expect(r.stdout).toContain('fence: harness/bad.ts imports bench/lib/suite.ts; harness/ may not import bench/');
    expect(r.stdout).toContain('fence: harness/bad.ts imports vitest');
    expect(r.stdout).not.toMatch(/harness\/serve\.ts|test\/helpers\/fixture\.ts imports|bench\/lib\/suite\.ts imports|bench\/test/);
    expect(r.stdout).toContain('5 architecture problem(s) in 8 files');
  });

  it('names each file of a cycle, type-only imports included', () => {
    const root = tree('cycle', {
      'engine/a.ts': "import { b } from './b.js';\nexport const a = b;\n",
      'engine/b.ts': "import { c } from './c.js';\nexport const b = c;\n",
      'engine/c.ts': "import { a } from './a.js';\nexport const c = 1;\n",
      'engine/d.ts': "import type { e } from './e.js';\nexport const d = 1;\n",
      'engine/e.ts': "import { d } from './d.js';\nexport type e = typeof d;\n",
    });
    const r = check(root);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('cycle: engine/a.ts -> engine/b.ts -> engine/c.ts -> engine/a.ts');
    expect(r.stdout).toContain('cycle: engine/d.ts -> engine/e.ts -> engine/d.ts');
    expect(r.stdout).toContain('2 architecture problem(s) in 5 files');
  });

  it('refuses core reaching the engine, the CLI reaching the store, and the server reaching the CLI', () => {
    const root = tree('layers', {
      'core/pure.ts': "import { store } from '../engine/state/store.js';\nexport const pure = store;\n",
      'engine/state/store.ts': 'export const store = 1;\n',
      'engine/state/state-store.ts': 'export type Record = { id: string };\n',
      'cli/cmd.ts': "import { store } from '../engine/state/store.js';\nexport const cmd = store;\n",
      // The store's interface and records are public to the layers that may reach the engine's folders.
      'farm/task.ts': "import type { Record } from '../engine/state/state-store.js';\nexport type R = Record;\n",
      'server/app.ts': "import { cmd } from '../cli/cmd.js';\nexport const app = cmd;\n",
      'version.ts': 'export const VERSION = "0";\n',
      'server/ok.ts': "import { VERSION } from '../version.js';\nexport const ok = VERSION;\n",
    });
    const r = check(root);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('layer: core/pure.ts (core) imports engine/state/store.ts (engine)');
    expect(r.stdout).toContain('layer: cli/cmd.ts imports engine/state/store.ts, which only engine may use');
    expect(r.stdout).not.toContain('imports engine/state/state-store.ts');
    expect(r.stdout).toContain('layer: server/app.ts (server) imports cli/cmd.ts (cli)');
    expect(r.stdout).not.toContain('server/ok.ts');
  });

  it('refuses the server and the CLI reaching the engine around its application layer, by import, import() or through the service', () => {
    const root = tree('gateway', {
      'engine/app/local-service.ts': 'export class LocalService { now() { return 0; } }\n',
      'engine/watermark/job.ts': 'export const ensureSegment = 1;\n',
      'server/routes.ts':
        "import { ensureSegment } from '../engine/watermark/job.js';\nimport type { LocalService } from '../engine/app/local-service.js';\nexport const f = (s: LocalService & { engine: unknown }) => [ensureSegment, s.engine];\n",
      'server/ok.ts': "import type { LocalService } from '../engine/app/local-service.js';\nexport const g = (service: LocalService) => service.now();\n",
      'cli/cmd.ts': 'export const h = (ctx: { service: { engine: { store: unknown } } }) => ctx.service.engine.store;\n',
      'engine/jobs/job-queue.ts': 'export interface JobQueue { close(): void }\n',
      'cli/run.ts':
        "import type { JobQueue } from '../engine/jobs/job-queue.js';\nexport const run = async (q: JobQueue) => [q, await import('../engine/watermark/job.js')];\n",
      'cli/ok.ts':
        "import type { LocalService } from '../engine/app/local-service.js';\nexport const k = async (s: LocalService) => [s, await import('../engine/app/local-service.js')];\n",
    });
    const r = check(root);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('layer: server/routes.ts (server) imports engine/watermark/job.ts; server reaches engine only through engine/app/');
    expect(r.stdout).toContain('reach: cli/cmd.ts:1 reaches through the service to its engine');
    expect(r.stdout).toContain('layer: cli/run.ts (cli) imports engine/jobs/job-queue.ts; cli reaches engine only through engine/app/');
    expect(r.stdout).toContain('layer: cli/run.ts (cli) imports engine/watermark/job.ts; cli reaches engine only through engine/app/');
    expect(r.stdout).not.toContain('server/ok.ts');
    expect(r.stdout).not.toContain('cli/ok.ts');
    expect(r.stdout).toContain('4 architecture problem(s) in 8 files');
  });

  it('refuses the CLI and the library reading inside an engine they hold, but not opening, passing or closing it', () => {
    const root = tree('engine-handle', {
      'engine/app/configured-engine.ts': 'export interface Engine { store: { describe(): string }; paths: { root: string }; close(): Promise<void> }\n',
      'cli/serve.ts':
        "import type { Engine } from '../engine/app/configured-engine.js';\nexport const f = (engine: Engine) => engine.store.describe();\nexport const g = (engine: Engine) => engine?.paths.root;\n",
      'cli/ok.ts':
        "import type { Engine } from '../engine/app/configured-engine.js';\n// engine.store is named here only\nexport const h = async (engine: Promise<Engine>, use: (e: Engine) => void) => {\n  const m = '../engine.js';\n  use(await engine.then((e) => e));\n  await (await engine).close();\n  return m;\n};\n",
      'library/connect.ts': "import type { Engine } from '../engine/app/configured-engine.js';\nexport const k = (engine: Engine) => engine.paths;\n",
      'server/app.ts': "import type { Engine } from '../engine/app/configured-engine.js';\nexport const s = (engine: Engine) => engine.paths;\n",
    });
    const r = check(root);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('reach: cli/serve.ts:2 reads inside the engine, which cli holds as a handle');
    expect(r.stdout).toContain('reach: cli/serve.ts:3 reads inside the engine');
    expect(r.stdout).toContain('reach: library/connect.ts:2 reads inside the engine, which library holds as a handle');
    expect(r.stdout).not.toContain('cli/ok.ts');
    expect(r.stdout).not.toContain('server/app.ts');
    expect(r.stdout).toContain('3 architecture problem(s)');
  });

  it('holds engine/jobs/ beneath the kinds of job and the application layer that dispatches them, with import() too', () => {
    const root = tree('beneath-jobs', {
      'core/ids.ts': 'export const id = (s: string) => s;\n',
      'version.ts': "export const VERSION = '1';\n",
      'engine/state/state-store.ts': 'export interface StateStore { close(): void }\n',
      'engine/ingest/ingest-job.ts': 'export const runIngestJob = () => 1;\n',
      'engine/app/job-runs.ts': 'export const runJob = () => 1;\n',
      'engine/jobs/job-lease.ts':
        "import { id } from '../../core/ids.js';\nimport type { StateStore } from '../state/state-store.js';\nimport { VERSION } from '../../version.js';\nexport const lease = (s: StateStore) => [id('a'), s, VERSION];\n",
      'engine/jobs/job-queue.ts':
        "import { lease } from './job-lease.js';\nexport const run = async () => [lease, await import('../ingest/ingest-job.js'), await import('../app/job-runs.js')];\n",
    });
    const r = check(root);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('beneath: engine/jobs/job-queue.ts imports engine/ingest/ingest-job.ts; engine/jobs/ imports only');
    expect(r.stdout).toContain('beneath: engine/jobs/job-queue.ts imports engine/app/job-runs.ts; engine/jobs/ imports only');
    expect(r.stdout).not.toContain('job-lease.ts');
    expect(r.stdout).toContain('2 architecture problem(s)');
  });

  it('refuses folders that import each other round, type-only imports included, though no file cycle is there', () => {
    const root = tree('folder-loops', {
      // The renderer draws with the watermark's drawing, which takes its urgency from the renderer's folder: no file
      // cycle, a folder loop.
      'engine/render/renderer.ts': "import { drawing } from '../watermark/drawing.js';\nexport const renderer = drawing;\n",
      'engine/render/urgency.ts': 'export const urgency = 1;\n',
      'engine/watermark/drawing.ts': "import { urgency } from '../render/urgency.js';\nexport const drawing = urgency;\n",
      // A type is enough: the command names the context's type, the CLI's entry registers the command.
      'cli/context.ts': 'export interface Context { id: string }\n',
      'cli/program.ts': "import { cmd } from './commands/cmd.js';\nexport const program = cmd;\n",
      'cli/commands/cmd.ts': "import type { Context } from '../context.js';\nexport const cmd = (c: Context) => c.id;\n",
      // One way only is no loop.
      'core/plan/args.ts': "import { pure } from '../pure.js';\nexport const args = pure;\n",
      'core/pure.ts': 'export const pure = 1;\n',
      // Routes on the server's own files, and the app that assembles them a folder above: no loop.
      'server/http-types.ts': 'export const json = 1;\n',
      'server/routes/home.ts': "import { json } from '../http-types.js';\nexport const home = json;\n",
      'server/app/app.ts': "import { home } from '../routes/home.js';\nimport { json } from '../http-types.js';\nexport const app = [home, json];\n",
    });
    const r = check(root);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(
      'folder loop: engine/render, engine/watermark import each other round (engine/render/renderer.ts -> engine/watermark/drawing.ts; engine/watermark/drawing.ts -> engine/render/urgency.ts)',
    );
    expect(r.stdout).toContain(
      'folder loop: cli, cli/commands import each other round (cli/commands/cmd.ts -> cli/context.ts; cli/program.ts -> cli/commands/cmd.ts)',
    );
    expect(r.stdout).not.toMatch(/^cycle:/m);
    expect(r.stdout).not.toContain('core/');
    expect(r.stdout).not.toContain('server');
    expect(r.stdout).toContain('2 architecture problem(s) in 11 files');
  });

  it('refuses a read of the wall clock in core, the engine, media, ffmpeg and the farm, but not the clock passed as a value, nor in comments or at the edges', () => {
    const lines = problemsIn('clock', {
      'core/stamp.ts': 'export const stamp = () => new Date();\n',
      'engine/render/queue.ts': 'export const since = (t: number) => Date.now() - t;\n',
      'engine/jobs/lease.ts': 'export const at = (d: Date = new  Date ( )) => d;\n',
      'engine/engine.ts': 'export const open = (now?: () => number) => now ?? Date.now;\n// Date.now() is never read here\n',
      'engine/state/parse.ts': 'export const parse = (ms: number) => new Date(ms).toISOString(); // not Date.now()\n',
      'media/s3-store.ts': 'export const down = (since: number) => Date.now() - since;\n',
      'ffmpeg/run-ffmpeg.ts': 'export const watch = (now: () => number = Date.now) => now();\nexport const stalled = (last: number) => Date.now() - last;\n',
      'farm/tasks/segment-task.ts': 'export const stamp = () => new Date().toISOString();\n',
      'core/forensic/analyse.ts': 'export const lap = (clock: () => number = performance.now.bind(performance)) => [clock(), performance.now()];\n',
      'server/log.ts': 'export const log = () => new Date().toISOString();\n',
      'cli/commands/worker.ts': 'export const now = () => Date.now();\n',
      'library/client.ts': 'export const at = () => Date.now();\n',
    });
    const why = " reads the wall clock (use the engine's `now`, or take a `now` at construction)";
    expect(new Set(lines)).toEqual(
      new Set([
        `clock: core/stamp.ts:1${why}`,
        `clock: engine/jobs/lease.ts:1${why}`,
        `clock: engine/render/queue.ts:1${why}`,
        `clock: media/s3-store.ts:1${why}`,
        `clock: ffmpeg/run-ffmpeg.ts:2${why}`,
        `clock: farm/tasks/segment-task.ts:1${why}`,
        `clock: core/forensic/analyse.ts:1${why}`,
        '7 architecture problem(s) in 12 files',
      ]),
    );
  });

  it('refuses a process started outside the runner and the files listed to start their own', () => {
    const lines = problemsIn('processes', {
      'ffmpeg/run-ffmpeg.ts': "import { spawn } from 'node:child_process';\nexport const run = spawn;\n",
      'engine/band/probe.ts': "import { execFileSync } from 'node:child_process';\nexport const probe = execFileSync;\n",
      'engine/forensic/read.ts': "export const read = async () => (await import('child_process')).spawn;\n",
      'engine/app/ok.ts': "import { run } from '../../ffmpeg/run-ffmpeg.js';\nexport const ok = run; // not child_process\n",
    });
    const why = ' starts processes itself (run them through ffmpeg/run-ffmpeg.ts, whose watchdog stops and kills them)';
    expect(new Set(lines)).toEqual(
      new Set([`process: engine/band/probe.ts${why}`, `process: engine/forensic/read.ts${why}`, '2 architecture problem(s) in 4 files']),
    );
  });

  it('refuses a file over 400 lines', () => {
    const root = tree('size', {
      'core/long.ts': 'export const a = 1;\n'.repeat(401),
      'core/ok.ts': 'export const b = 1;\n'.repeat(400),
    });
    const r = check(root);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('size: core/long.ts has 401 lines (at most 400)');
    expect(r.stdout).not.toContain('core/ok.ts');
  });

  it('holds bench/, harness/ and scripts/ to the same size', () => {
    const root = tree('bench-size', {
      'src/core/a.ts': 'export const a = 1;\n',
      'bench/long.ts': 'export const a = 1;\n'.repeat(401),
      'bench/lib/ok.ts': 'export const b = 1;\n'.repeat(400),
      'harness/long.ts': 'export const c = 1;\n'.repeat(401),
      'scripts/long.mjs': 'export const d = 1;\n'.repeat(401),
    });
    const r = check('--repo', root);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('size: bench/long.ts has 401 lines (at most 400)');
    expect(r.stdout).toContain('size: harness/long.ts has 401 lines (at most 400)');
    expect(r.stdout).toContain('size: scripts/long.mjs has 401 lines (at most 400)');
    expect(r.stdout).not.toContain('bench/lib/ok.ts');
  });

  it('refuses a heavy package that the CLI loads at start, naming the chain, and allows it through import()', () => {
    const root = tree('startup', {
      'cli/main.ts': "import { run } from './program.js';\nexport const main = run;\n",
      'cli/program.ts': "import { farm } from '../engine/app/farm.js';\nexport const run = () => import('../engine/app/lazy.js');\nexport const f = farm;\n",
      'engine/app/farm.ts': "import { Queue } from 'bullmq';\nimport type { Redis } from 'ioredis';\nexport const farm = Queue;\nexport type R = Redis;\n",
      'engine/app/lazy.ts': "import { S3Client } from '@aws-sdk/client-s3';\nexport const s3 = S3Client;\n",
    });
    const r = check(root);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('startup: cli/main.ts -> cli/program.ts -> engine/app/farm.ts imports bullmq');
    expect(r.stdout).not.toContain('ioredis');
    expect(r.stdout).not.toContain('client-s3');
    expect(r.stdout).toContain('1 architecture problem(s) in 4 files');
  });

  it("refuses wmark's own heavy parts loaded at start, from the entry or a command's registration, and allows them through import()", () => {
    const root = tree('heavy-modules', {
      'cli/main.ts': "import { run } from './program.js';\nexport const main = run;\n",
      'cli/program.ts':
        "import { registerServe } from './commands/serve.js';\nimport { open } from './context.js';\nexport const run = () => [registerServe, open];\n",
      // A command's registration that opens the engine itself, at start.
      'cli/commands/serve.ts': "import { openEngine } from '../../engine/app/configured-engine.js';\nexport const registerServe = openEngine;\n",
      // The context loads the store and the ffmpeg runner only when a command asks, and names the engine's type only.
      'cli/context.ts':
        "import type { Engine } from '../engine/app/configured-engine.js';\nexport const open = async (): Promise<Engine> => (await import('../engine/app/configured-engine.js')).openEngine;\nexport const ff = () => import('../ffmpeg/run-ffmpeg.js');\n",
      'engine/app/configured-engine.ts':
        "import { store } from '../state/sqlite-state-store.js';\nexport type { Engine } from '../engine.js';\nexport const openEngine = store;\n",
      'engine/engine.ts': 'export interface Engine { id: string }\n',
      'engine/state/sqlite-state-store.ts': "import Database from 'better-sqlite3';\nexport const store = { id: String(Database) };\n",
      'ffmpeg/run-ffmpeg.ts': 'export const run = 1;\n',
    });
    const r = check(root);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(
      'startup: cli/main.ts -> cli/program.ts -> cli/commands/serve.ts -> engine/app/configured-engine.ts is a heavy part loaded at start',
    );
    // What lies behind the first heavy part of a chain is not reported again; what import() loads is not reported at all.
    expect(r.stdout).not.toContain('sqlite-state-store');
    expect(r.stdout).not.toContain('better-sqlite3');
    expect(r.stdout).not.toContain('run-ffmpeg');
    expect(r.stdout).not.toContain('engine/engine.ts');
    expect(r.stdout).toContain('1 architecture problem(s) in 8 files');
  });
});
