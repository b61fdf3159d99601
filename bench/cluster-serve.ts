// What the cluster suite asks serve: a video ingested, a watermark rendered until its playlist ends, and its output
// played once as a viewer's player would fetch it.
import path from 'node:path';
import type { ServeProcess } from './cluster-processes.js';
import { POLL_MS } from './cluster-report.js';
import type { Bench } from './cluster-setup.js';
import { fmt } from './lib/suite.js';
import type { SourceClip } from './lib/video.js';
import { PLACEMENT } from './text-job.js';

const KEY = 'bench-cluster';

async function json(res: Response): Promise<Record<string, unknown>> {
  const text = await res.text();
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(`HTTP ${res.status}: not JSON: ${text.slice(0, 500)}`);
  }
}

export interface Ingested {
  id: string;
  segments: number;
  wallS: number;
}

/** POST /2.0/videos with the clip's path (serve runs on this machine), then waits for INGESTED. */
export async function ingest(b: Bench, serve: ServeProcess, clip: SourceClip): Promise<Ingested> {
  b.ctx.log(`${serve.label}: ingesting ${path.basename(clip.path)} ...`);
  const t0 = performance.now();
  const res = await fetch(`${serve.url}/2.0/videos`, {
    method: 'POST',
    headers: { ...serve.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ sourceUrl: clip.path, key: KEY }),
  });
  const created = await json(res);
  if (res.status !== 201 && res.status !== 200) throw new Error(`${serve.label}: POST /2.0/videos answered ${res.status}: ${JSON.stringify(created)}`);
  for (;;) {
    const video = await json(await fetch(`${serve.url}/2.0/videos/${String(created.id)}`, { headers: serve.headers }));
    if (video.status === 'INGESTED') {
      const wallS = (performance.now() - t0) / 1000;
      b.ctx.log(`  ${String(video.segments)} segments, ${fmt(wallS, 1)} s`);
      return { id: String(video.id), segments: Number(video.segments), wallS };
    }
    if (String(video.status).startsWith('FAILED')) throw new Error(`${serve.label}: ingest failed: ${JSON.stringify(video)}`);
    if (performance.now() - t0 > 20 * 60_000) throw new Error(`${serve.label}: ingest not done after 20 minutes`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

export interface JobTiming {
  watermarkId: string;
  /** POST -> the 2.0 answer (READY: the opening plays). */
  answerS: number;
  /** POST -> the signed playlist lists every segment and ends (#EXT-X-ENDLIST): every segment rendered. */
  wallS: number;
  m3u8: string;
}

const countOf = (text: string, needle: string) => text.split(needle).length - 1;

/** Asks for a new TEXT watermark (m3u8 only) and waits until its playlist lists all `segments` and is ended. */
export async function watermarkJob(b: Bench, serve: ServeProcess, segments: number, text: string): Promise<JobTiming> {
  const body = JSON.stringify({ key: KEY, settings: [{ type: 'TEXT', content: text, ...PLACEMENT }], containers: ['m3u8'] });
  const t0 = performance.now();
  let answer: Record<string, unknown>;
  for (;;) {
    const res = await fetch(`${serve.url}/2.0/watermark`, { method: 'POST', headers: { ...serve.headers, 'content-type': 'application/json' }, body });
    answer = await json(res);
    // 503 NOT_READY_YET: not playable within 2 minutes; the same request joins the same job.
    if (res.status === 503) continue;
    if ((res.status !== 201 && res.status !== 200) || answer.status !== 'READY')
      throw new Error(`${serve.label}: POST /2.0/watermark answered ${res.status}: ${JSON.stringify(answer)}`);
    break;
  }
  const answerS = (performance.now() - t0) / 1000;
  const m3u8 = String((answer.containers as { m3u8?: string } | undefined)?.m3u8);
  for (;;) {
    const res = await fetch(m3u8);
    const playlist = await res.text();
    if (res.ok && playlist.includes('#EXT-X-ENDLIST') && countOf(playlist, '#EXTINF') === segments) break;
    if (performance.now() - t0 > b.o.jobTimeoutMs)
      throw new Error(
        `${serve.label}: the playlist did not list ${segments} segments within ${b.o.jobTimeoutMs / 1000} s (HTTP ${res.status}, ${countOf(playlist, '#EXTINF')} listed)`,
      );
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  return { watermarkId: String(answer.id), answerS, wallS: (performance.now() - t0) / 1000, m3u8 };
}

/** Plays the whole output through serve once, as a viewer's player would fetch it: bytes of every segment. */
export async function servedBytes(m3u8: string): Promise<number> {
  const playlist = await (await fetch(m3u8)).text();
  let bytes = 0;
  for (const uri of playlist.split('\n').filter((l) => l.trim() && !l.startsWith('#'))) {
    const res = await fetch(new URL(uri.trim(), m3u8));
    if (!res.ok) throw new Error(`GET ${uri}: HTTP ${res.status}`);
    bytes += (await res.arrayBuffer()).byteLength;
  }
  return bytes;
}
