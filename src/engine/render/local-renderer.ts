// Segment renders with ffmpeg on this machine, into the data folder's media folder. Every render of the process shares
// one budget of encoder threads (the scheduler), and renders of the same clean segment for several viewers that wait
// together share one decode: one ffmpeg decodes it once and encodes it once per viewer.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, link, mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { WmarkError } from '../../core/errors.js';
import { MAX_SHARED_RENDERS, segmentRenderArgs, sharedFilterGraph, sharedSegmentRenderArgs } from '../../core/plan/render-args.js';
import type { EncodeOptions } from '../../core/plan/x264.js';
import type { ProcessRunner } from '../../ffmpeg/run-ffmpeg.js';
import type { FolderMediaStore } from '../../media/folder-store.js';
import { type BandStats, fallBack, PreparedSegments, renderBandSegment } from '../band/band-render.js';
import { type RenderListener, RenderScheduler, type RenderUrgency, type SharedRender } from './render-scheduler.js';
import type { BandRender, RendererHealth, SegmentRender, SegmentRenderer } from './segment-renderer.js';

/** Where a render writes before its output is renamed into place (hidden: listings skip it). */
const WORK_DIR = '.work';
/**
 * The drawing (filter script, text files and image renditions) stays while its folder lives: on-demand renders need
 * it again later.
 */
const DRAW_DIR = '.draw';
const FILTER_NAME = 'filter.txt';
/** Threads of a band render: its ffmpeg (the mark on the band's rows) and its x264 (bandEncodeArgs) run one each. */
const BAND_RENDER_THREADS = 1;
/** Parsed shared segments kept for splicing (a few MB each at 720p). */
const PREPARED_SEGMENTS = 8;

export interface LocalRendererOptions {
  /** The media folder renders read and write (the data folder's). */
  media: FolderMediaStore;
  runner: ProcessRunner;
  fontFile: string;
  encode: EncodeOptions;
  /** Encoder threads this process may use at once (its cores). */
  threads: number;
  /** The engine's clock. */
  now?: () => number;
  /** Band rendering: the patched x264 (without it, every render is a full one). */
  band?: {
    x264: string;
    /** Where a band render that fell back to a full one is told (default: stderr). */
    log?: (message: string) => void;
  };
}

interface SharedMember extends SharedRender {
  job: SegmentRender;
}

export class LocalRenderer implements SegmentRenderer {
  readonly concurrency: SegmentRenderer['concurrency'];
  private readonly scheduler: RenderScheduler;
  /** Drawings written to their folders by this process, by folder: each is written once (and again if it went). */
  private readonly drawings = new Map<string, Promise<string>>();
  private readonly bands: BandStats = { rendered: 0, fallbacks: {} };
  /** Shared segments parsed for splicing, the latest few. */
  private readonly prepared = new PreparedSegments(PREPARED_SEGMENTS);

  constructor(private readonly options: LocalRendererOptions) {
    this.scheduler = new RenderScheduler(options.threads, options.now ? { now: options.now } : {});
    // Two ingests at once (each is one ffmpeg on every core); watermark jobs only coordinate, their encodes share the
    // scheduler's threads, and running several lets renders of one source segment share a decode.
    this.concurrency = { watermarkJobs: MAX_SHARED_RENDERS, ingestJobs: 2 };
  }

  render(job: SegmentRender, urgency: RenderUrgency, signal?: AbortSignal): Promise<void> {
    const band = this.options.band && job.band;
    // A band render is the band alone: nothing to share with other viewers of the segment, one thread at a time (the
    // draw, then the band encode), so an urgent one leaves the other cores to the next renders, and quick: an urgent
    // render waits for one to end rather than throw its work away.
    if (band)
      return this.scheduler.render(job.output, urgency, job.group, (threads, s) => this.renderBandOrFull(job, band, threads, s), signal, {
        maxThreads: BAND_RENDER_THREADS,
        quick: true,
      });
    const share: SharedMember | undefined = job.shareable
      ? { key: job.input, job, runMany: (members, threads, s) => this.renderMany(members as SharedMember[], threads, s) }
      : undefined;
    return this.scheduler.render(job.output, urgency, job.group, (threads, s) => this.renderOne(job, threads, s), signal, share ? { share } : {});
  }

  private file(key: string): string {
    return this.options.media.fileOf(key);
  }

  /** The folder with the drawing's files, written there unless they already are. */
  private drawingDir(job: SegmentRender): Promise<string> {
    const dir = path.join(this.file(job.drawingFolder), DRAW_DIR);
    let written = this.drawings.get(dir);
    if (!written || !existsSync(path.join(dir, FILTER_NAME))) {
      written = (async () => {
        await mkdir(dir, { recursive: true });
        const drawing = job.drawing(this.options.fontFile);
        // The same content every time: written atomically, so a render starting meanwhile never reads half a file. No
        // fsync: they are written again whenever they are missing.
        await Promise.all([
          ...drawing.images.map((image) => this.placeImage(image.key, path.join(dir, image.name))),
          ...drawing.files.map((f) => writeFileAtomic(path.join(dir, f.name), f.content, { encoding: 'utf8', fsync: false })),
        ]);
        // The graph last: its presence says the drawing is complete.
        await writeFileAtomic(path.join(dir, FILTER_NAME), drawing.graph, { encoding: 'utf8', fsync: false });
        return dir;
      })();
      written.catch(() => this.drawings.delete(dir));
      this.drawings.set(dir, written);
    }
    return written;
  }

  /**
   * An image rendition from the media folder into the drawing's folder: a hard link (the same filesystem), else a copy,
   * under a temporary name first so a render never reads half of it.
   */
  private async placeImage(key: string, file: string): Promise<void> {
    const from = this.file(key);
    if (!existsSync(from)) throw new WmarkError('WATERMARK_FAILED', `the image ${key} this watermark draws is missing from ${this.options.media.location}`);
    const temp = `${file}.${randomUUID().slice(0, 8)}.tmp`;
    try {
      await link(from, temp).catch(() => copyFile(from, temp));
      await rename(temp, file);
    } finally {
      await rm(temp, { force: true });
    }
  }

  /** A part file of its own beside the output: a player's render and a job's may work on the same segment at once. */
  private async partFor(output: string, tag: string): Promise<string> {
    const work = path.join(path.dirname(this.file(output)), WORK_DIR);
    await mkdir(work, { recursive: true });
    return path.join(work, `${tag}.${path.basename(output)}.part`);
  }

  private async renderOne(job: SegmentRender, threads: number, signal: AbortSignal): Promise<void> {
    const target = this.file(job.output);
    if (existsSync(target)) return;
    if (signal.aborted) throw new WmarkError('CANCELLED', 'watermark job cancelled');
    const draw = await this.drawingDir(job);
    const part = await this.partFor(job.output, randomUUID().slice(0, 8));
    try {
      await this.options.runner.ffmpeg(
        segmentRenderArgs({
          input: this.file(job.input),
          output: part,
          filterScript: path.join(draw, FILTER_NAME),
          gop: job.gop,
          threads,
          encode: this.options.encode,
          hasAudio: job.hasAudio,
        }),
        { signal, cwd: draw },
      );
      await rename(part, target);
    } finally {
      await rm(part, { force: true });
    }
  }

  /**
   * The band alone: the watermark drawn on the band's source rows, band-encoded and spliced into the shared segment.
   * Any failure but a cancellation (x264 reports the clamp missed, the splice finds the streams unlike) renders the
   * segment in full instead (with the band render's one thread), counted and told with its reason: a watermark never
   * fails for it.
   */
  private async renderBandOrFull(job: SegmentRender, band: BandRender, threads: number, signal: AbortSignal): Promise<void> {
    try {
      await this.renderBand(job, band, signal);
      this.bands.rendered++;
      return;
    } catch (error) {
      const log = this.options.band?.log ?? ((line: string) => process.stderr.write(`wmark: ${line}\n`));
      fallBack(error, { output: job.output, signal, stats: this.bands, log });
    }
    await this.renderOne(job, threads, signal);
  }

  private async renderBand(job: SegmentRender, band: BandRender, signal: AbortSignal): Promise<void> {
    const target = this.file(job.output);
    if (existsSync(target)) return;
    if (signal.aborted) throw new WmarkError('CANCELLED', 'watermark job cancelled');
    const draw = await this.drawingDir(job);
    const part = await this.partFor(job.output, randomUUID().slice(0, 8));
    const { x264 } = this.options.band!;
    try {
      await renderBandSegment(
        { x264, runner: this.options.runner },
        {
          cut: band.cut,
          options: band.options,
          graph: await readFile(path.join(draw, FILTER_NAME), 'utf8'),
          cwd: draw,
          rows: this.file(band.rows),
          qpfile: this.file(band.qpfile),
          shared: await this.prepared.get(band.shared, (key) => readFile(this.file(key))),
          output: part,
          base: part.replace(/\.part$/, ''),
          signal,
        },
      );
      await rename(part, target);
    } finally {
      await rm(part, { force: true });
    }
  }

  /** Several viewers' renders of one source segment in one ffmpeg: one decode, split, a drawing and an encode each. */
  private async renderMany(members: SharedMember[], threads: number, signal: AbortSignal): Promise<void> {
    const first = members[0]!.job;
    const tag = randomUUID().slice(0, 8);
    // Each viewer's graph reads its files from its own drawing folder and has pad labels of its own.
    const chains = await Promise.all(
      members.map(async (m, j) => m.job.drawing(this.options.fontFile, { dir: await this.drawingDir(m.job), labels: `w${j}` }).graph),
    );
    const parts = await Promise.all(members.map((m) => this.partFor(m.job.output, tag)));
    const script = path.join(path.dirname(parts[0]!), `${tag}.shared-filter.txt`);
    try {
      await writeFileAtomic(script, sharedFilterGraph(chains), 'utf8');
      await this.options.runner.ffmpeg(
        sharedSegmentRenderArgs({
          input: this.file(first.input),
          outputs: parts.map((output, j) => ({ output, chain: chains[j]! })),
          filterScript: script,
          gop: first.gop,
          threads,
          encode: this.options.encode,
          hasAudio: first.hasAudio,
        }),
        { signal, cwd: path.dirname(script) },
      );
      await Promise.all(members.map((m, j) => rename(parts[j]!, this.file(m.job.output))));
    } finally {
      await Promise.all([script, ...parts].map((f) => rm(f, { force: true })));
    }
  }

  async useSources(): Promise<void> {}

  async discard(): Promise<void> {}

  /** Removes part files a killed process left in the folder's work folder (a live render keeps writing to its own). */
  async tidy(folder: string, olderThanMs?: number): Promise<void> {
    const work = path.join(this.file(folder), WORK_DIR);
    if (olderThanMs === undefined) return void (await rm(work, { recursive: true, force: true }));
    const names = await readdir(work).catch(() => [] as string[]);
    await Promise.all(
      names.map(async (name) => {
        const file = path.join(work, name);
        const info = await stat(file).catch(() => undefined);
        if (info && info.mtimeMs < olderThanMs) await rm(file, { force: true });
      }),
    );
  }

  depth() {
    return this.scheduler.depth();
  }

  stats() {
    return { ...this.scheduler.stats, joined: this.scheduler.shared.joined };
  }

  onRendered(listener: RenderListener): () => void {
    return this.scheduler.onRendered(listener);
  }

  bandStats(): BandStats {
    return { rendered: this.bands.rendered, fallbacks: { ...this.bands.fallbacks } };
  }

  /** Renders run here, queued in this process only: no farm's tasks. */
  async taskDepth(): Promise<undefined> {
    return undefined;
  }

  async health(): Promise<RendererHealth> {
    return { reachable: true };
  }

  async close(): Promise<void> {}
}
