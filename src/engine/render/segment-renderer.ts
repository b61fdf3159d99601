// The render strategy: how a watermark's segment gets rendered. An engine is built with one (ffmpeg on this machine,
// or the render farm's workers) and the watermark pipeline never asks which: it describes the render and waits.

import type { BandCut, BandEncodeOptions } from '../../core/plan/band-plan.js';
import type { TextFile } from '../../core/plan/text-drawing.js';
import type { BandStats } from '../band/band-render.js';
import type { RenderListener, RenderUrgency } from './render-scheduler.js';

export type { RenderListener, RenderUrgency } from './render-scheduler.js';

/** Where a drawing's graph runs: the folder its files are in (a graph run from elsewhere), its pad labels' prefix. */
export interface DrawingPlace {
  /** Files are named relative to ffmpeg's working folder, or inside this folder when given (by absolute path). */
  dir?: string;
  /** Graphs of several viewers in one ffmpeg run each need labels of their own. */
  labels?: string;
}

/** An image file the graph reads: its name beside the text files, and the media object it is a copy of. */
interface DrawingImage {
  name: string;
  key: string;
}

/** A drawing laid out: the filtergraph, the text files it reads and the images (media objects) it overlays. */
export interface DrawnGraph {
  graph: string;
  files: TextFile[];
  images: DrawingImage[];
}

/** A watermark's drawing laid out for a font, wherever its graph runs. */
export type Drawing = (fontFile: string, place?: DrawingPlace) => DrawnGraph;

/** One segment render: a source segment in, a drawn and encoded segment out, both named by media key. */
export interface SegmentRender {
  /** The working segment or forensic variant it is drawn on. */
  input: string;
  /** Where the rendered segment goes; renders of the same output at the same time are one render. */
  output: string;
  drawing: Drawing;
  /** The media folder the drawing belongs to (a watermark's, or a shared render's): its files are kept there. */
  drawingFolder: string;
  /** Frames per GOP of the encode (the segment is one closed GOP). */
  gop: number;
  hasAudio: boolean;
  /** Renders of the same input may share one decode (several viewers of a clean segment). */
  shareable: boolean;
  /** Whose render it is (a watermark): render-ahead takes turns between groups. */
  group: string;
  /**
   * The drawing fits this band of the title's shared encode: a renderer that can renders the band alone and splices
   * it in (and renders in full when that fails); one that cannot renders in full.
   */
  band?: BandRender;
}

/** A segment's band render: media keys of the shared segment, the band's source rows and the frame types. */
export interface BandRender {
  cut: BandCut;
  shared: string;
  rows: string;
  qpfile: string;
  options: BandEncodeOptions;
}

/** A dependency's health as /healthz and `wmark status` show it. */
export interface RendererHealth {
  /** False when the renderer cannot take work now (its queue does not answer). */
  reachable: boolean;
  /** Extra facts for the operator (a farm's queue depth, workers, where its media is). */
  detail?: Record<string, unknown>;
  /** What may be shown to a caller on another machine (nothing that says where things are). */
  publicDetail?: Record<string, unknown>;
}

/** A render farm's tasks as its queue counts them: waiting for a worker, and being rendered. */
export interface FarmTasks {
  waiting: number;
  active: number;
}

export interface SegmentRenderer {
  /** Watermark and ingest jobs worth running at once with this renderer. */
  readonly concurrency: { watermarkJobs: number; ingestJobs: number };
  /** Makes a video's working media reachable for renders (a farm with a shared store uploads what only this data folder has). */
  useSources(videoId: string): Promise<void>;
  /** Puts the rendered segment at `job.output`; resolves once it is there. */
  render(job: SegmentRender, urgency: RenderUrgency, signal?: AbortSignal): Promise<void>;
  /** Forgets renders of these outputs that have not started (their watermark was deleted). */
  discard(outputs: string[]): Promise<void>;
  /** Removes what renders of a folder left behind: all of it when `olderThanMs` is not given (no render runs there). */
  tidy(folder: string, olderThanMs?: number): Promise<void>;
  /** Renders waiting and running, by urgency. */
  depth(): Record<RenderUrgency | 'running', number>;
  /** Renders started, stopped to make room for more urgent ones, and joined into another's shared decode. */
  stats(): { started: number; preempted: number; joined: number };
  /** Hears every render that finishes with its output, and how long it took (metrics); returns what unsubscribes. */
  onRendered(listener: RenderListener): () => void;
  /** Band renders done and fallen back to full renders since the start (a renderer that renders no bands: none). */
  bandStats(): BandStats;
  /**
   * The tasks of the render farm this renderer hands renders to, as its queue counts them; undefined where renders
   * wait on no queue (ffmpeg in this process) or the queue does not answer.
   */
  taskDepth(): Promise<FarmTasks | undefined>;
  health(): Promise<RendererHealth>;
  close(): Promise<void>;
}
