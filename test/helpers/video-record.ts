// A video's row as an ingest leaves it (INGESTED, 320x180, two 2-s segments), for tests that need the row and no clip.
import type { VideoRecord } from '../../src/engine/state/state-store.js';

export function ingestedVideoRow(id: string, key: string, over: Partial<VideoRecord> = {}): VideoRecord {
  return {
    id,
    key,
    sourceUrl: `/sources/${id}.mp4`,
    name: null,
    status: 'INGESTED',
    enableForensic: false,
    width: 320,
    height: 180,
    durationSeconds: 4,
    fpsNum: 25,
    fpsDen: 1,
    hasAudio: false,
    segments: [2, 2],
    timeOrigin: 0,
    error: null,
    createdOn: 0,
    ...over,
  };
}
