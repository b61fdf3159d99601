// What a watermark draws, as one filtergraph over the video's frames: its TEXT and IMAGE settings in order (the later on
// top), drawtext filters for text and an overlay of a prepared rendition for each image, with the files they read.
import type { FontMetrics } from '../font-metrics.js';
import { type ImageRef, isVisible, type Setting } from '../setting-types.js';
import { imageOverlay, imagePixels, type PixelSize } from './image-drawing.js';
import { type TextFile, textDrawing } from './text-drawing.js';

export interface WatermarkGraphInput {
  settings: readonly Setting[];
  fontFile: string;
  metrics: FontMetrics;
  frame: { width: number; height: number };
  /** Presentation time of the video's first frame (the origin of animations). */
  timeOrigin: number;
  /** Folder the graph reads its files from (absolute, for a graph run elsewhere); default: ffmpeg's working folder. */
  dir?: string;
  /** Prefix of the graph's pad labels: graphs of several viewers in one ffmpeg run must not share a label. */
  labels?: string;
}

/** An image the graph reads: its file name beside the text files, and which rendition of which image it is. */
interface GraphImage {
  name: string;
  image: ImageRef;
  size: PixelSize;
}

export interface WatermarkGraph {
  /** A filtergraph with one unlabelled input (the frames) and one unlabelled output; `null` when nothing is drawn. */
  graph: string;
  files: TextFile[];
  images: GraphImage[];
}

/** One step of the drawing: filters applied to the frames, or an image source overlaid on them. */
type Step = { filters: string[] } | { source: string; overlay: string };

export function watermarkGraph(input: WatermarkGraphInput): WatermarkGraph {
  const files: TextFile[] = [];
  const images: GraphImage[] = [];
  const steps: Step[] = [];
  const at = (name: string) => (input.dir ? `${input.dir.replace(/\/+$/, '')}/${name}` : name);
  input.settings.filter(isVisible).forEach((setting, index) => {
    if (setting.type === 'TEXT') {
      const d = textDrawing({
        setting,
        index,
        fontFile: input.fontFile,
        metrics: input.metrics,
        frameHeight: input.frame.height,
        timeOrigin: input.timeOrigin,
        ...(input.dir ? { textDir: input.dir } : {}),
      });
      files.push(...d.files);
      steps.push({ filters: d.filters });
      return;
    }
    if (!setting.image) throw new Error(`IMAGE setting ${index} was never fetched (no image reference)`);
    const name = `image_${index}.png`;
    images.push({ name, image: setting.image, size: imagePixels(setting, setting.image, input.frame.width) });
    steps.push(imageOverlay({ setting, file: at(name), timeOrigin: input.timeOrigin }));
  });
  return { graph: composeGraph(steps, input.labels ?? ''), files, images };
}

/**
 * Joins the steps into a graph whose first statement starts on the frames and whose last ends with the drawn frames,
 * both unlabelled: `-filter_script:v` links them to the stream, and a shared render puts its own labels around it.
 * Filters chain with commas; an image closes the chain under a label, reads its source under another, and the overlay
 * of the two starts the next chain.
 */
export function composeGraph(steps: readonly Step[], labels: string): string {
  const statements: string[] = [];
  let chain: string[] = [];
  let k = 0;
  for (const step of steps) {
    if ('filters' in step) {
      chain.push(...step.filters);
      continue;
    }
    const [frames, image] = [`[${labels}a${k}]`, `[${labels}i${k}]`];
    statements.push(`${chain.length ? chain.join(',') : 'null'}${frames}`, `${step.source}${image}`);
    chain = [`${frames}${image}${step.overlay}`];
    k++;
  }
  statements.push(chain.length ? chain.join(',') : 'null');
  return statements.join(';');
}
