// One real-time viewer of a `wmark serve` (band-capacity's trials): it POSTs /2.0/watermark with its own mark, reads
// the playlist, fetches segment 0 at once and segment i when its playback reaches segment i-1 (one ahead), and counts
// the stalls (bench/lib/realtime-viewer.ts).
import { performance } from 'node:perf_hooks';
import { parseMediaPlaylist } from '../../src/core/playlist.js';
import { PlaybackClock, type ViewerSummary } from './realtime-viewer.js';

/** A request that takes longer than this fails its viewer (a segment waits for its render, never this long). */
const REQUEST_TIMEOUT_MS = 180_000;

export interface ViewerResult extends ViewerSummary {
  bytes: number;
  /** The playlist's segment durations (empty when it was not read). */
  durations: number[];
  /** Why the viewer could not play to the end (it counts as stalled). */
  error?: string;
}

/** A viewer's mark: its own text, small, in the bottom band (docs/settings.md: what fits a band). */
const viewerSettings = (text: string) => [
  { type: 'TEXT', content: text, x: 0.97, y: 0.96, align: 'RIGHT', verticalAlign: 'BOTTOM', fontSize: 0.03, fontOpacity: 0.6 },
];

export async function fetchOk(url: string, init?: RequestInit): Promise<Response> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${url.split('?')[0]}: HTTP ${res.status} ${(await res.text().catch(() => '')).slice(0, 300)}`);
  return res;
}

export const sleepUntil = (t: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, t - performance.now())));

/** One real-time viewer, from its POST to the last segment; times on its own clock (seconds from the POST). */
export async function watch(
  url: string,
  who: { clientId: string; apiKey: string; key: string },
  text: string,
  startupS: number | undefined,
): Promise<ViewerResult> {
  const t0 = performance.now();
  const now = () => (performance.now() - t0) / 1000;
  let bytes = 0;
  let durations: number[] = [];
  let clock: PlaybackClock | undefined;
  try {
    const res = await fetchOk(`${url}/2.0/watermark`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-client-id': who.clientId, 'x-api-key': who.apiKey },
      body: JSON.stringify({ key: who.key, settings: viewerSettings(text), containers: ['m3u8'] }),
    });
    const answer = (await res.json()) as { status: string; containers: { m3u8?: string } };
    if (res.status !== 201 || answer.status !== 'READY' || !answer.containers.m3u8)
      throw new Error(`POST /2.0/watermark: expected 201 READY with a playlist, got ${res.status} ${JSON.stringify(answer)}`);
    const m3u8 = answer.containers.m3u8;
    const playlist = parseMediaPlaylist(await (await fetchOk(m3u8)).text());
    if (!playlist.ended) throw new Error('the on-demand playlist does not list the whole title (no #EXT-X-ENDLIST)');
    durations = playlist.segments.map((x) => x.duration);
    clock = new PlaybackClock(durations, startupS ?? durations[0]!);
    for (let i = 0; i < playlist.segments.length; i++) {
      await sleepUntil(t0 + clock.requestAt(i) * 1000);
      const body = await (await fetchOk(new URL(playlist.segments[i]!.uri, m3u8).href)).arrayBuffer();
      bytes += body.byteLength;
      clock.arrived(i, now());
    }
    return { ...clock.summary(), bytes, durations };
  } catch (error) {
    const partial = clock ? safeSummary(clock) : undefined;
    return { firstSegmentS: NaN, stalls: 0, stalledS: 0, worstLatenessS: 0, ...partial, bytes, durations, error: String(error) };
  }
}

function safeSummary(clock: PlaybackClock): ViewerSummary | undefined {
  try {
    return clock.summary();
  } catch {
    return undefined;
  }
}
