// Crash recovery with real processes: `wmark serve` is SIGKILLed mid-job and started again on the same data dir; the
// job resumes from the segments already finished (none redone) and the old long-poll href, still valid, reports READY.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { natural, tempDir } from '../../harness/fixtures.js';
import {
  bearer,
  call,
  freePort,
  ingestOverHttp,
  keyHeaders,
  parseM3u8,
  type SpawnedServe,
  slowFfmpeg,
  spawnServe,
  waitFor,
} from '../../harness/serve-helpers.js';

const spawned: SpawnedServe[] = [];
let dataDir: string | undefined;

afterAll(async () => {
  for (const p of spawned) {
    p.kill('SIGKILL');
    await p.exited;
  }
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const finishedSegments = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => /^seg_\d{5}\.ts$/.test(f))
        .sort()
    : [];

describe('wmark serve restart', () => {
  it('SIGKILL mid-job, start again: the job finishes without redoing segments and the long-poll href reports READY', async () => {
    dataDir = tempDir('serve-restart');
    const log = path.join(dataDir, 'ffmpeg-calls.log');
    // Each segment render sleeps first, so the job is reliably caught between its first and last segment.
    const env = { WMARK_FFMPEG: slowFfmpeg(dataDir, log, 0.5) };
    // `--port 0` is refused by the config schema (port must be 1-65535), so take a free port up front.
    const port = await freePort();
    const args = ['--port', String(port), '--workers', '1'];

    const first = spawnServe(dataDir, args, env);
    spawned.push(first);
    const base = await first.url;
    expect(base).toBe(`http://127.0.0.1:${port}`);
    const clientId = /client id:\s+(wmc_\S+)/.exec(first.stderr())?.[1];
    const apiKey = /API key:\s+(wmk_\S+)/.exec(first.stderr())?.[1];
    expect(clientId && apiKey, first.stderr()).toBeTruthy();
    const cred = { clientId: clientId!, apiKey: apiKey! };
    const token = (await call(base, 'GET', '/1.0/authenticate/accessToken', { headers: keyHeaders(cred) })).json.token as string;

    const { video } = await ingestOverHttp(base, bearer(token), await natural(20), 'crash-clip', '1.0');
    // 20 s: the lead segments (0.5, 0.5, 1, 2 s), then four 4-s GOPs. The 1.0 default containers include the mp4, so even
    // this on-demand server renders the whole watermark in one job.
    expect(video.segments).toBe(8);
    const count = video.segments as number;
    const posted = await call(base, 'POST', '/1.0/watermark', {
      headers: bearer(token),
      body: { key: 'crash-clip', settings: [{ content: 'survives a crash' }] },
    });
    expect(posted.status).toBe(201);
    expect(posted.json.status).toBe('PENDING');
    const dir = path.join(dataDir, 'media', 'watermarks', video.id, posted.json.id);

    await waitFor(() => (finishedSegments(dir).length > 0 ? true : undefined), 'the first watermarked segment', 60_000, 25);
    first.kill('SIGKILL');
    await first.exited;
    const before = finishedSegments(dir);
    expect(before.length).toBeGreaterThan(0);
    expect(before.length).toBeLessThan(count);
    const rendersBefore = readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l.includes('.ts.part')).length;

    const second = spawnServe(dataDir, args, env);
    spawned.push(second);
    expect(await second.url).toBe(base);
    // Credentials exist now: none are created or shown again.
    expect(second.stderr()).not.toMatch(/API key:/);

    // The href handed out by the killed server still works (same secret) and, polled like a client does, reaches READY.
    const ready = await waitFor(
      async () => {
        const r = await call(base, 'GET', posted.json.href);
        expect(r.status).toBe(200);
        return r.json.status === 'READY' ? r : undefined;
      },
      'the long-poll href to report READY after the restart',
      60_000,
      500,
    );
    expect(ready.json).toMatchObject({ id: posted.json.id, videoId: video.id, status: 'READY' });
    expect(ready.json.containers.m3u8).toBeDefined();

    // ... and the job really finishes: a complete playlist and the mp4.
    const complete = await waitFor(
      async () => {
        const r = await call(base, 'GET', posted.json.href);
        return r.json.containers.mp4 ? r : undefined;
      },
      'the job to finish after the restart',
      90_000,
      500,
    );
    const playlist = await call(base, 'GET', complete.json.containers.m3u8);
    const manifest = parseM3u8(playlist.text);
    expect(manifest.endList).toBe(true);
    expect(manifest.segments).toHaveLength(count);
    for (const seg of manifest.segments) expect((await fetch(new URL(seg.uri, complete.json.containers.m3u8))).status).toBe(200);
    expect(finishedSegments(dir)).toHaveLength(count);

    // Segments finished before the crash were not rendered again; the one in flight was (once).
    const renders = readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l.includes('.ts.part'));
    for (const name of before)
      expect(
        renders.filter((l) => l.includes(`${name}.part`)),
        name,
      ).toHaveLength(1);
    expect(renders.length - rendersBefore).toBe(count - before.length);

    // SIGTERM is a graceful stop: requests finish, the process exits 0.
    second.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    expect(second.stderr()).toMatch(/shutting down/);
  });
});
