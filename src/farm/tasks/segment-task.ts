// One segment render as data a worker on any machine can run: where the input and output live in the media store,
// the filtergraph, the text files it draws and the images it overlays (by media key: their bytes never go through
// Redis), and the encode. It travels through Redis as JSON, so it holds no local paths: the filtergraph names its
// files and the font by plain names inside the worker's scratch folder.
import { createHash } from 'node:crypto';
import { copyFile, link, mkdir, mkdtemp, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { validationError, WmarkError } from '../../core/errors.js';
import { segmentRenderArgs } from '../../core/plan/render-args.js';
import type { ProcessRunner } from '../../ffmpeg/run-ffmpeg.js';
import type { MediaStore } from '../../media/media-store.js';
import { type BandOutcome, bandTaskSchema, type WorkerBand } from './band-task.js';
import { encodeSchema, keySchema, versionSchema } from './task-fields.js';

/** The font's name inside the scratch folder: a task's filtergraph says `fontfile=font.ttf`, each worker links its own. */
export const TASK_FONT_FILE = 'font.ttf';
/** Names in the scratch folder that a task's text files and images may not take. */
const RESERVED = new Set([TASK_FONT_FILE, 'filter.txt', 'input.ts', 'output.ts']);

const scratchName = z
  .string()
  .regex(/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$/)
  .refine((n) => !RESERVED.has(n), 'a reserved name');

export const segmentTaskSchema = z.object({
  /** The wmark version that planned the task: a worker of another version refuses it (its output could differ). */
  version: versionSchema,
  /** The working segment (or forensic variant) to draw on, and where the rendered segment goes. */
  input: keySchema,
  output: keySchema,
  /** The filtergraph, read by ffmpeg with -filter_script; it names its text files and the font by plain file name. */
  filterScript: z.string().min(1).max(1_000_000),
  textFiles: z.array(z.object({ name: scratchName, content: z.string().max(100_000) })).max(1000),
  /** The image renditions the filtergraph overlays: each fetched from the store into the scratch folder under its name. */
  images: z
    .array(z.object({ name: scratchName, key: keySchema }))
    .max(100)
    .optional(),
  /** SHA-256 of the font the layout was measured with (hex); a worker whose font differs refuses the task. */
  fontSha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  encode: encodeSchema,
  gop: z.number().int().positive(),
  hasAudio: z.boolean(),
  /**
   * The drawing fits this band of the title's shared encode: a worker with the patched x264 renders the band alone and
   * splices it in (a full render when that fails); one without it renders in full.
   */
  band: bandTaskSchema.optional(),
});

export type SegmentTask = z.infer<typeof segmentTaskSchema>;

/** Reads a task off the queue; anything malformed is TASK_INVALID, naming every problem. */
export function parseSegmentTask(data: unknown): SegmentTask {
  const parsed = segmentTaskSchema.safeParse(data);
  if (parsed.success) return parsed.data;
  throw validationError(
    'TASK_INVALID',
    parsed.error.issues.map((i) => `segment task ${i.path.join('.') || ''}: ${i.message}`.replace('task : ', 'task: ')),
  );
}

/** SHA-256 (hex) of a font file, to tell whether two machines draw with the same font. */
export async function fontSha256(fontFile: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(fontFile))
    .digest('hex');
}

/**
 * Image renditions a worker has fetched, kept in a folder of its own: they are named by the hash of their bytes, so a
 * copy never goes stale, and a logo drawn for many viewers is fetched from the store once per worker.
 */
export class ImageCache {
  private readonly files = new Map<string, Promise<string>>();

  constructor(
    private readonly store: MediaStore,
    private readonly dir: string,
    private readonly max = 256,
  ) {}

  /** The image's local file, fetched from the store unless it was already. */
  file(key: string): Promise<string> {
    let file = this.files.get(key);
    if (!file) {
      const target = path.join(this.dir, key.replaceAll('/', '_'));
      file = this.store.getFile(key, target).then(() => target);
      file.catch(() => this.files.delete(key));
      this.files.set(key, file);
      // The oldest entries go first once the folder holds `max` images.
      for (const [old, gone] of this.files) {
        if (this.files.size <= this.max) break;
        this.files.delete(old);
        void gone.then((f) => rm(f, { force: true })).catch(() => undefined);
      }
    }
    return file;
  }

  close(): Promise<void> {
    return rm(this.dir, { recursive: true, force: true });
  }
}

export interface SegmentRunOptions {
  /** This worker's drawtext font. */
  fontFile: string;
  /** The worker's clock, which times the task. */
  now: () => number;
  /** ffmpeg threads for decode, filters and encode (one per concurrent render is what a farm wants). */
  threads?: number;
  /** Where scratch folders go (default: the OS temp dir). */
  tmpDir?: string;
  /** Images fetched by earlier tasks of this worker (default: each task fetches its own). */
  images?: ImageCache;
  /** Band rendering on this worker (without it, a task's band is rendered in full and not counted). */
  band?: WorkerBand;
  signal?: AbortSignal;
}

export interface SegmentRunResult {
  output: string;
  /** False when the output already existed: nothing was fetched or encoded. */
  rendered: boolean;
  ms: number;
  /** A task with a band: spliced, or rendered in full and why. */
  band?: BandOutcome;
}

/**
 * Where a worker keeps a segment it made but could not store (the store went away during the upload), so the task's
 * retry stores that file rather than render it again. An output key names one segment of one watermark, so a kept
 * file is that key's content whichever task asks for it.
 */
function unsentFile(options: SegmentRunOptions, output: string): string {
  return path.join(options.tmpDir ?? os.tmpdir(), 'wmark-unsent', `${createHash('sha256').update(output).digest('hex')}.ts`);
}

/**
 * Renders one segment: fetches the input from the store into a scratch folder, draws the watermark with ffmpeg, and
 * stores the output. Idempotent: an output already in the store is not redone, so a task retried after its worker
 * died, or run twice by two workers, costs at most one more encode and writes the same object. A segment made whose
 * upload failed is kept on the worker, and the retry on this worker uploads it instead of rendering it again.
 */
export async function runSegmentTask(task: SegmentTask, store: MediaStore, runner: ProcessRunner, options: SegmentRunOptions): Promise<SegmentRunResult> {
  const started = options.now();
  const ms = () => options.now() - started;
  if (await store.exists(task.output)) return { output: task.output, rendered: false, ms: ms() };
  const unsent = unsentFile(options, task.output);
  if (
    await stat(unsent).then(
      () => true,
      () => false,
    )
  ) {
    await store.putFile(task.output, unsent);
    await rm(unsent, { force: true });
    return { output: task.output, rendered: false, ms: ms() };
  }
  const work = await mkdtemp(path.join(options.tmpDir ?? os.tmpdir(), 'wmark-seg-'));
  try {
    await Promise.all([
      ...(task.images ?? []).map((image) => placeImage(store, options.images, image.key, path.join(work, image.name))),
      ...task.textFiles.map((f) => writeFile(path.join(work, f.name), f.content, 'utf8')),
      writeFile(path.join(work, 'filter.txt'), task.filterScript, 'utf8'),
      symlink(path.resolve(options.fontFile), path.join(work, TASK_FONT_FILE)).catch(() => copyFile(options.fontFile, path.join(work, TASK_FONT_FILE))),
    ]);
    const output = path.join(work, 'output.ts');
    const band =
      task.band && options.band
        ? await options.band.render(task.band, { graph: task.filterScript, work, output, label: task.output, store, runner, signal: options.signal })
        : undefined;
    if (band !== 'spliced') await renderInFull(task, store, runner, { work, threads: Math.max(1, options.threads ?? 1), signal: options.signal });
    if (options.signal?.aborted) throw new WmarkError('CANCELLED', `render of ${task.output} cancelled`);
    try {
      await store.putFile(task.output, output);
    } catch (error) {
      await mkdir(path.dirname(unsent), { recursive: true });
      await rename(output, unsent).catch(() => undefined);
      throw error;
    }
    return { output: task.output, rendered: true, ms: ms(), ...(band ? { band } : {}) };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The segment drawn and encoded whole by ffmpeg, in the scratch folder `work` (output.ts). */
async function renderInFull(task: SegmentTask, store: MediaStore, runner: ProcessRunner, job: { work: string; threads: number; signal?: AbortSignal }) {
  await store.getFile(task.input, path.join(job.work, 'input.ts'));
  await runner.ffmpeg(
    segmentRenderArgs({
      input: 'input.ts',
      output: 'output.ts',
      filterScript: 'filter.txt',
      gop: task.gop,
      threads: job.threads,
      encode: task.encode,
      hasAudio: task.hasAudio,
    }),
    { cwd: job.work, signal: job.signal },
  );
}

/**
 * An image into the scratch folder: hard-linked from the worker's cache (the task keeps its copy even if the cache lets
 * it go meanwhile), or fetched from the store for this task alone.
 */
async function placeImage(store: MediaStore, cache: ImageCache | undefined, key: string, file: string): Promise<void> {
  if (!cache) return store.getFile(key, file);
  const cached = await cache.file(key);
  await link(cached, file).catch(() => copyFile(cached, file));
}
