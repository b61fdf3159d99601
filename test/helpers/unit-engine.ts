// An engine for unit tests of the watermark pipeline: a private in-memory state store, a media folder in a throwaway
// data dir, and a fake renderer that records every render and writes a line of text instead of running ffmpeg. Videos
// are inserted as records with small stand-in media, so nothing here ever spawns a process.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { variantFileName, variantNames } from '../../src/core/forensic/variant-plan.js';
import { parseSettings } from '../../src/core/setting-schema.js';
import type { Setting } from '../../src/core/setting-types.js';
import { LAYOUT_NAME, mediaKeys } from '../../src/engine/data-folder/layout.js';
import type { Engine } from '../../src/engine/engine.js';
import { openEngine } from '../../src/engine/open/open-engine.js';
import type { RenderUrgency, SegmentRender, SegmentRenderer } from '../../src/engine/render/segment-renderer.js';
import { SqliteStateStore } from '../../src/engine/state/sqlite-state-store.js';
import type { VideoRecord, VideoStatus } from '../../src/engine/state/state-store.js';
import type { ProcessRunner } from '../../src/ffmpeg/run-ffmpeg.js';
import { FolderMediaStore } from '../../src/media/folder-store.js';
import type { MediaStore } from '../../src/media/media-store.js';

/** The font name the fake renderer lays drawings out for. */
export const FAKE_FONT = 'font.ttf';
/** Segment durations of a unit video: a lead of one GOP split 1+1+2 s, two whole GOPs, a shorter tail. */
export const UNIT_SEGMENTS = [1, 1, 2, 4, 4, 2.5];

/** One call to the fake renderer, as it was asked. */
interface RecordedRender {
  input: string;
  output: string;
  drawingFolder: string;
  gop: number;
  hasAudio: boolean;
  shareable: boolean;
  group: string;
  urgency: RenderUrgency;
  /** The drawing laid out for FAKE_FONT. */
  graph: string;
}

/** What the fake renderer writes for a render: names its input and its drawing. */
export const renderedContent = (input: string, graph: string) => `rendered ${input} with ${graph}`;

class FakeRenderer implements SegmentRenderer {
  readonly concurrency = { watermarkJobs: 2, ingestJobs: 1 };
  readonly renders: RecordedRender[] = [];
  /** Outputs the engine asked to forget, in the order asked. */
  readonly discarded: string[] = [];
  /** Folders tidied (with their age limit, when one was given). */
  readonly tidied: { folder: string; olderThanMs?: number }[] = [];
  /** While set, a render is recorded at once but writes its output only once this settles. */
  gate: Promise<void> | undefined;
  /** A render this returns an error for fails with it (after the gate), writing nothing. */
  failWith: ((job: SegmentRender) => Error | undefined) | undefined;

  constructor(private readonly media: MediaStore) {}

  /** Holds every render from now on until the returned function is called. */
  hold(): () => void {
    let release!: () => void;
    this.gate = new Promise<void>((resolve) => (release = resolve));
    return () => {
      this.gate = undefined;
      release();
    };
  }

  async useSources(): Promise<void> {}

  async render(job: SegmentRender, urgency: RenderUrgency): Promise<void> {
    const { graph } = job.drawing(FAKE_FONT);
    this.renders.push({
      input: job.input,
      output: job.output,
      drawingFolder: job.drawingFolder,
      gop: job.gop,
      hasAudio: job.hasAudio,
      shareable: job.shareable,
      group: job.group,
      urgency,
      graph,
    });
    if (this.gate) await this.gate;
    const error = this.failWith?.(job);
    if (error) throw error;
    await this.media.put(job.output, renderedContent(job.input, graph));
  }

  async discard(outputs: string[]): Promise<void> {
    this.discarded.push(...outputs);
  }

  async tidy(folder: string, olderThanMs?: number): Promise<void> {
    this.tidied.push({ folder, ...(olderThanMs === undefined ? {} : { olderThanMs }) });
  }

  depth(): Record<RenderUrgency | 'running', number> {
    return { now: 0, ahead: 0, background: 0, running: 0 };
  }

  stats(): { started: number; preempted: number; joined: number } {
    return { started: this.renders.length, preempted: 0, joined: 0 };
  }

  onRendered(): () => void {
    return () => undefined;
  }

  bandStats() {
    return { rendered: 0, fallbacks: {} };
  }

  async taskDepth() {
    return undefined;
  }

  async health() {
    return { reachable: true };
  }

  async close(): Promise<void> {}
}

const noFfmpeg = async (): Promise<never> => {
  throw new Error('no ffmpeg in unit tests');
};
const runner: ProcessRunner = { ffmpeg: noFfmpeg, ffprobe: noFfmpeg, x264: noFfmpeg };

export interface UnitEngine {
  engine: Engine;
  renderer: FakeRenderer;
  /** Every render asked for, in the order asked. */
  renders: RecordedRender[];
  dataDir: string;
  dispose(): Promise<void>;
}

export async function unitEngine(options: { now?: () => number } = {}): Promise<UnitEngine> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'wmark-unit-'));
  let renderer: FakeRenderer | undefined;
  const engine = await openEngine({
    dataDir,
    workers: 2,
    encode: { preset: 'veryfast', crf: 23 },
    store: new SqliteStateStore(':memory:'),
    runner,
    ...(options.now ? { now: options.now } : {}),
    deployment: async (parts) => {
      const media = new FolderMediaStore(parts.paths.media);
      renderer = new FakeRenderer(media);
      return {
        media,
        renderer,
        ingest: {
          normalise: async () => {
            throw new Error('no ingest in unit tests');
          },
        },
      };
    },
  });
  return {
    engine,
    renderer: renderer!,
    renders: renderer!.renders,
    dataDir,
    async dispose() {
      await engine.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Settings as a client sends them, validated and normalised as a 2.0 request's are. */
export function settingsOf(raw: unknown[]): Setting[] {
  const parsed = parseSettings(raw, { apiVersion: '2.0' });
  if (!parsed.ok) throw new Error(`test settings are invalid: ${parsed.issues.join('; ')}`);
  return parsed.value;
}

/** A TEXT setting as a client sends it (defaults for the rest). */
export const text = (content: string, extra: Record<string, unknown> = {}) => ({ type: 'TEXT', content, ...extra });
/** A FORENSIC setting carrying `payload` (base64 of its two bytes, as API 2.0 sends it). */
export const forensic = (payload: number) => ({ type: 'FORENSIC', content: Buffer.from([payload >> 8, payload & 0xff]).toString('base64') });

export interface UnitVideoOptions {
  id?: string;
  key?: string;
  status?: VideoStatus;
  enableForensic?: boolean;
  segments?: number[];
}

/** Inserts an ingested 320x180 30 fps video record with no audio (nothing written to the media store). */
export async function insertVideo(engine: Engine, options: UnitVideoOptions = {}): Promise<VideoRecord> {
  const id = options.id ?? `vid-${Math.random().toString(36).slice(2, 10)}`;
  const segments = options.segments ?? UNIT_SEGMENTS;
  const video: VideoRecord = {
    id,
    key: options.key ?? `key-${id}`,
    sourceUrl: `file:///sources/${id}.mp4`,
    name: null,
    status: options.status ?? 'INGESTED',
    enableForensic: options.enableForensic ?? false,
    forensicLayout: options.enableForensic ? 'whole' : null,
    width: 320,
    height: 180,
    durationSeconds: segments.reduce((a, b) => a + b, 0),
    fpsNum: 30,
    fpsDen: 1,
    hasAudio: false,
    segments,
    timeOrigin: 0,
    error: null,
    createdOn: engine.now(),
  };
  if (!(await engine.store.insertVideo(video))) throw new Error(`video ${id} already exists`);
  return video;
}

/** What a unit video's working segment `index` holds. */
const workingContent = (videoId: string, index: number) => `working ${videoId} ${index}`;
/** What a forensic unit video's variant `letters` of segment `index` holds. */
export const variantContent = (videoId: string, letters: string, index: number) => `variant ${letters} of ${videoId} segment ${index}`;

/** Writes a small stand-in for every working segment of the video. */
async function writeWorkingSegments(engine: Engine, video: VideoRecord): Promise<void> {
  await Promise.all(video.segments.map((_, i) => engine.media.put(mediaKeys.workingSegment(video.id, i), workingContent(video.id, i))));
}

/** Code slots per segment as a 'whole' layout gives them: two for a segment of 3 s or more, else one. */
export const slotsOf = (segments: readonly number[]) => segments.map((d) => (d >= 3 ? 2 : 1));

/** Writes a forensic video's layout file and every variant of every segment, each with content of its own. */
async function writeForensicMedia(engine: Engine, video: VideoRecord): Promise<number[]> {
  const slotsPerSegment = slotsOf(video.segments);
  await engine.media.put(mediaKeys.forensicFile(video.id, LAYOUT_NAME), JSON.stringify({ version: 2, slotsPerSegment }));
  await Promise.all(
    slotsPerSegment.flatMap((slots, k) =>
      variantNames(slots).map((letters) =>
        engine.media.put(mediaKeys.forensicFile(video.id, variantFileName(letters, k)), variantContent(video.id, letters, k)),
      ),
    ),
  );
  return slotsPerSegment;
}

/** An ingested video with its working segments (and, when forensic, its layout and variants) in the media store. */
export async function addVideo(engine: Engine, options: UnitVideoOptions = {}): Promise<VideoRecord> {
  const video = await insertVideo(engine, options);
  await writeWorkingSegments(engine, video);
  if (video.enableForensic) await writeForensicMedia(engine, video);
  return video;
}

/** A controllable clock for `unitEngine({ now })`. */
export function testClock(start = 1_700_000_000_000): { now: () => number; set(ms: number): void; advance(ms: number): void } {
  let t = start;
  return {
    now: () => t,
    set: (ms) => {
      t = ms;
    },
    advance: (ms) => {
      t += ms;
    },
  };
}

/**
 * A fresh unit engine for every test of the file (on `clock`, reset to its start before each test, when given),
 * handed to `use` before the test runs and disposed after it.
 */
export function unitEnginePerTest(use: (unit: UnitEngine) => void, clock?: ReturnType<typeof testClock>): void {
  let current: UnitEngine | undefined;
  beforeEach(async () => {
    clock?.set(1_700_000_000_000);
    current = await unitEngine(clock ? { now: clock.now } : {});
    use(current);
  });
  afterEach(() => current?.dispose());
}
