// The real binary (node bin/wmark.js, running the dist/ build from globalSetup) as a user or CI pipeline runs it.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANSI, runWmark, type Sandbox, type SpawnResult, sandbox, startWmark, until } from '../../harness/cli-helpers.js';
import { natural, REPO } from '../../harness/fixtures.js';

const PKG_VERSION = (JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
/** A stack trace line as Node prints it ("    at fn (file:1:2)"). */
const STACK_LINE = /^\s+at .+/m;

/** One worker renders the 90 s clip's segments one after another, so there is time to interrupt the job. */
const LONG_JOB_ENV = { WMARK_WORKERS: '1' };

let box: Sandbox;
let env: Record<string, string>;
// The SIGINT test gets its own data dir; its 90 s clip is ingested in the background while the other tests run.
let longBox: Sandbox;
let longEnv: Record<string, string>;
let longIngest: Promise<SpawnResult>;

beforeAll(() => {
  box = sandbox('e2e');
  env = { WMARK_HOME: box.dataDir, WMARK_CONFIG_DIR: box.configDir };
  longBox = sandbox('e2e-long');
  longEnv = { WMARK_HOME: longBox.dataDir, WMARK_CONFIG_DIR: longBox.configDir, ...LONG_JOB_ENV };
  longIngest = natural(90).then((clip) => runWmark(['--json', 'ingest', clip, '--key', 'long'], { env: longEnv, cwd: longBox.cwd }));
});

afterAll(async () => {
  await longIngest?.catch(() => undefined);
  box?.dispose();
  longBox?.dispose();
});

const wmark = (args: string[], extraEnv: Record<string, string | undefined> = {}) => runWmark(args, { env: { ...env, ...extraEnv }, cwd: box.cwd });

function expectCleanError(r: SpawnResult, code: number, message: string): void {
  expect(r.code, r.stderr).toBe(code);
  expect(r.stderr).toContain(`error: ${message}`);
  expect(r.stderr).not.toMatch(STACK_LINE);
  expect(r.stderr).not.toMatch(ANSI);
}

describe('spawned wmark', () => {
  it('--version prints the version from package.json', async () => {
    const r = await wmark(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${PKG_VERSION}\n`);
    expect(r.stderr).toBe('');
    // The binary answers a bare --version itself; with another flag the CLI does: both print the same line.
    const throughCli = await wmark(['--quiet', '--version']);
    expect(throughCli.code).toBe(0);
    expect(throughCli.stdout).toBe(r.stdout);
    expect((await wmark(['-V'])).stdout).toBe(r.stdout);
  });

  it('doctor --json prints one parseable report', async () => {
    const r = await wmark(['doctor', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { ok: boolean; checks: { name: string; ok: boolean }[] };
    expect(report.ok).toBe(true);
    expect(report.checks.map((c) => c.name)).toEqual(expect.arrayContaining(['ffmpeg', 'drawtext filter', 'libx264 encoder', 'font', 'database']));
  });

  it('ingests a small clip and watermarks it: READY with signed m3u8 and mp4 URLs', async () => {
    const clip = await natural(4);
    const ingest = await wmark(['--json', 'ingest', clip, '--key', 'small']);
    expect(ingest.code, ingest.stderr).toBe(0);
    const video = JSON.parse(ingest.stdout) as { id: string; key: string; status: string; segments: number };
    expect(video).toEqual(expect.objectContaining({ key: 'small', status: 'INGESTED' }));
    expect(video.segments).toBeGreaterThan(0);

    const args = ['watermark', '--json', '--key', 'small', '--text', 'for alice@example.com', '--x', '0.97', '--align', 'RIGHT'];
    const r = await wmark(args);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const view = JSON.parse(r.stdout) as {
      id: string;
      status: string;
      created: boolean;
      videoId: string;
      containers: Record<string, string>;
      files: Record<string, string>;
    };
    expect(view.status).toBe('READY');
    expect(view.created).toBe(true);
    expect(view.videoId).toBe(video.id);
    for (const url of [view.containers.m3u8!, view.containers.mp4!]) {
      const u = new URL(url);
      expect(u.searchParams.get('signature')).toMatch(/^[\w-]{20,}$/);
      // Signed links carry Unix milliseconds in the future.
      expect(Number(u.searchParams.get('expiration'))).toBeGreaterThan(Date.now());
    }
    expect(view.containers.m3u8).toContain('expiration=');
    expect(view.containers.m3u8).toContain('signature=');
    expect(existsSync(view.files.m3u8!)).toBe(true);
    expect(existsSync(view.files.mp4!)).toBe(true);
    expect(readFileSync(view.files.m3u8!, 'utf8')).toContain('#EXT-X-ENDLIST');

    // The same request again returns the same watermark and encodes nothing.
    const again = await wmark(args);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual(expect.objectContaining({ id: view.id, status: 'READY', created: false }));
  });

  it('errors exit with the documented code, say "error:" on stderr and print no stack trace', async () => {
    const [usage, unknown, config, doctor, json] = await Promise.all([
      wmark(['watermark', '--key', 'no-such-video', '--text', 'hi']),
      wmark(['frob']),
      wmark(['template', 'list'], { WMARK_WORKERS: 'abc' }),
      wmark(['doctor'], { WMARK_FFMPEG: '/nonexistent' }),
      wmark(['--json', 'watermark', '--key', 'no-such-video', '--text', 'hi']),
    ]);
    expectCleanError(usage, 2, 'no video with key "no-such-video"');
    expectCleanError(unknown, 2, "unknown command 'frob'");
    expectCleanError(config, 3, 'env WMARK_WORKERS: expected an integer');
    expect(doctor.code).toBe(6);
    expect(doctor.stderr).toContain('warning: missing: ffmpeg');
    expect(doctor.stderr).not.toMatch(STACK_LINE);

    // --json: the error is the one JSON value on stdout.
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({ error: expect.objectContaining({ code: 'VIDEO_NOT_FOUND', message: 'no video with key "no-such-video"' }) });
    expect(json.stderr).toBe('');
  });

  it('piped stdout and stderr carry no ANSI escapes, even without NO_COLOR', async () => {
    const runs: [string[], Record<string, string | undefined>][] = [
      [['template', 'list'], {}],
      // Without NO_COLOR and CI only the piped (non-TTY) streams keep colour and spinners off.
      ...[['template', 'list'], ['doctor'], ['template', 'show', 'nope']].map((args): [string[], Record<string, undefined>] => [
        args,
        { NO_COLOR: undefined, CI: undefined },
      ]),
    ];
    const results = await Promise.all(runs.map(([args, extra]) => wmark(args, extra)));
    results.forEach((r, i) => {
      const what = `${runs[i]![0].join(' ')} ${JSON.stringify(runs[i]![1])}`;
      expect(r.stdout + r.stderr, what).not.toBe('');
      expect(r.stdout, what).not.toMatch(ANSI);
      expect(r.stderr, what).not.toMatch(ANSI);
    });
  });

  it('SIGINT during a long watermark exits 130 and keeps finished segments; a rerun resumes and completes', async () => {
    const ingest = await longIngest;
    expect(ingest.code, ingest.stderr).toBe(0);
    const video = JSON.parse(ingest.stdout) as { id: string; segments: number };
    expect(video.segments).toBeGreaterThanOrEqual(4);

    const args = ['watermark', '--json', '--key', 'long', '--text', 'interrupt me'];
    const videoDir = path.join(longBox.dataDir, 'media', 'watermarks', video.id);
    const segmentsIn = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((f) => /^seg_\d+\.ts$/.test(f)) : []);

    const first = startWmark(args, { env: longEnv, cwd: longBox.cwd });
    let dir: string;
    let interrupted: SpawnResult;
    try {
      // Interrupt once the first segment is published (the playlist is playable) while the rest are still rendering.
      dir = await until(
        () => {
          if (first.child.exitCode !== null) throw new Error(`wmark exited before it could be interrupted (${first.child.exitCode}): ${first.stderr()}`);
          const wm = existsSync(videoDir) ? readdirSync(videoDir).find((d) => existsSync(path.join(videoDir, d, 'video.m3u8'))) : undefined;
          return wm && path.join(videoDir, wm);
        },
        'the first rendered segment',
        60_000,
        20,
      );
      first.child.kill('SIGINT');
      interrupted = await first.done;
    } finally {
      // Never leave the child running when the wait above failed.
      if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
    }

    expect(interrupted.code, interrupted.stderr).toBe(130);
    expect(interrupted.stderr).not.toMatch(STACK_LINE);
    const body = JSON.parse(interrupted.stdout) as { error: { code: string; message: string } };
    expect(body.error.message).toMatch(/cancel|interrupt/);
    const kept = segmentsIn(dir);
    expect(kept.length).toBeGreaterThanOrEqual(1);
    expect(kept.length, 'the job finished before SIGINT arrived').toBeLessThan(video.segments);
    const keptMtimes = new Map(kept.map((f) => [f, statSync(path.join(dir, f)).mtimeMs]));

    const rerun = await runWmark(args, { env: longEnv, cwd: longBox.cwd });
    expect(rerun.code, rerun.stderr).toBe(0);
    const view = JSON.parse(rerun.stdout) as {
      id: string;
      status: string;
      created: boolean;
      resumed: { rendered: number; total: number };
      files: { dir: string; mp4?: string };
    };
    expect(view.status).toBe('READY');
    expect(view.created).toBe(false);
    // It says what it did: the segments the interrupted run left, it rendered.
    expect(view.resumed).toEqual({ rendered: video.segments - kept.length, total: video.segments });
    expect(view.files.dir).toBe(dir);
    expect(view.files.mp4 && existsSync(view.files.mp4)).toBeTruthy();
    expect(segmentsIn(dir)).toHaveLength(video.segments);
    // Resumed, not restarted: segments finished before the interrupt were not rendered again.
    for (const [f, mtime] of keptMtimes) expect(statSync(path.join(dir, f)).mtimeMs, f).toBe(mtime);
    expect(readFileSync(path.join(dir, 'video.m3u8'), 'utf8')).toContain('#EXT-X-ENDLIST');
  });
});
