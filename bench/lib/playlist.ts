// Reading watermark outputs on disk for suites: when a playlist became playable, what it lists, and how many
// seconds of video were actually encoded into a watermark's folder.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseMediaPlaylist } from '../../src/core/playlist.js';
import { PLAYLIST_NAME } from '../../src/engine/data-folder/layout.js';

/** A playlist file that lists at least one segment (polled every few ms, so a substring test, not a parse). */
export function playlistPlayable(file: string): boolean {
  return existsSync(file) && readFileSync(file, 'utf8').includes('#EXTINF');
}

/**
 * A check for "a watermark folder that did not exist before has a playable playlist", under a video's watermarks
 * folder: how a suite sees a CLI run become playable without knowing the watermark id in advance.
 */
export function newPlayableWatermark(videoWatermarks: string): () => boolean {
  const before = new Set(existsSync(videoWatermarks) ? readdirSync(videoWatermarks) : []);
  return () =>
    existsSync(videoWatermarks) && readdirSync(videoWatermarks).some((d) => !before.has(d) && playlistPlayable(path.join(videoWatermarks, d, PLAYLIST_NAME)));
}

export interface PlaylistStats {
  segments: number;
  seconds: number;
  ended: boolean;
}

export function playlistStats(file: string): PlaylistStats {
  const list = parseMediaPlaylist(readFileSync(file, 'utf8'));
  return { segments: list.segments.length, seconds: list.segments.reduce((a, s) => a + s.duration, 0), ended: list.ended };
}

export interface EncodedSeconds {
  /** Seconds of video in the segment files present in the folder. */
  seconds: number;
  files: number;
  /** Segment files the playlist does not list (measured with ffprobe instead). */
  unlisted: string[];
}

const SEGMENT_FILE = /^seg_\d{5}\.ts$/;

/**
 * What was really encoded for a watermark: the #EXTINF durations of the segment files that exist in its folder.
 * A segment file the playlist does not list is measured with `durationOf` (on-demand rendering may write segments
 * out of order, before the playlist on disk lists them).
 */
export async function encodedSeconds(dir: string, durationOf: (file: string) => Promise<number>): Promise<EncodedSeconds> {
  const listed = new Map<string, number>();
  const playlist = path.join(dir, PLAYLIST_NAME);
  if (existsSync(playlist)) for (const s of parseMediaPlaylist(readFileSync(playlist, 'utf8')).segments) listed.set(s.uri.split('?')[0]!, s.duration);
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => SEGMENT_FILE.test(f)) : [];
  const unlisted = files.filter((f) => !listed.has(f));
  let seconds = files.reduce((a, f) => a + (listed.get(f) ?? 0), 0);
  for (const f of unlisted) seconds += await durationOf(path.join(dir, f));
  return { seconds, files: files.length, unlisted };
}
