// Whether a TEXT or IMAGE setting can ever be seen: one placed wholly outside the frame for the whole video is refused
// rather than rendered into a watermark that shows nothing. Pure: the caller passes the video's picture size and
// duration.
//
// Text's drawn box is not known before ffmpeg lays the glyphs out, so the check uses a box that is surely at least as
// big (every character 3 em wide, every line 2 em tall, plus the shadow's offset): a setting is refused only when even
// that box stays outside the frame at every moment. An image's box is its drawn size, known once it is fetched (an
// IMAGE not fetched yet is not judged). A MOVE animation counts from its start to wherever it has got by the end of
// the video.

import type { MoveAnimation, Setting, VisibleSetting } from '../setting-types.js';
import { H_FACTOR, V_FACTOR } from './filter-values.js';
import { imagePixels } from './image-drawing.js';

export interface Frame {
  width: number;
  height: number;
  /** Seconds; null or undefined when unknown (the whole animation is then assumed to play). */
  duration?: number | null;
}

/** Wider than any glyph advance in a text font (DejaVu Sans' widest are under 2 em; a tab draws as 4 spaces). */
const MAX_EM_PER_CHAR = 3;
/** Taller than any line pitch plus drawtext's own offsets. */
const MAX_EM_PER_LINE = 2;

/** One issue per TEXT or IMAGE setting that stays wholly outside the frame, named by its path (`settings[0].x`). */
export function offFrameIssues(settings: readonly Setting[], frame: Frame, path = 'settings'): string[] {
  const issues: string[] = [];
  if (!(frame.width > 0 && frame.height > 0)) return issues;
  settings.forEach((s, i) => {
    if (s.type === 'FORENSIC') return;
    const box = s.type === 'TEXT' ? textBox(s, frame) : s.image ? imageBox(imagePixels(s, s.image, frame.width)) : undefined;
    const issue = box && offFrameIssue(s, box, frame, `${path}[${i}]`);
    if (issue) issues.push(issue);
  });
  return issues;
}

/** The open interval of anchor positions (as a fraction of the frame) at which some of the box is inside the frame. */
function visibleRange(frameSize: number, boxSize: number, factor: number, shadow: number): [number, number] {
  return [-(boxSize * (1 - factor) + shadow) / frameSize, (frameSize + boxSize * factor + shadow) / frameSize];
}

/** The parameters s in [0, 1] for which from + (to - from) * s lies in the open interval (lo, hi); null when none. */
function insideSpan(from: number, to: number, [lo, hi]: [number, number]): [number, number] | null {
  const d = to - from;
  if (d === 0) return from > lo && from < hi ? [0, 1] : null;
  const a = (lo - from) / d;
  const b = (hi - from) / d;
  const start = Math.max(0, Math.min(a, b));
  const end = Math.min(1, Math.max(a, b));
  return start < end || (start === end && from + d * start > lo && from + d * start < hi) ? [start, end] : null;
}

/** A box drawn at an anchor: its size, and how far it reaches past its edges (a text's shadow). */
interface Box {
  width: number;
  height: number;
  beyond: { x: number; y: number };
  what: string;
}

function textBox(s: Extract<Setting, { type: 'TEXT' }>, frame: Frame): Box {
  const lines = s.content.split('\n');
  const longest = Math.max(...lines.map((l) => Array.from(l).length));
  const fontPx = s.fontSize * frame.height + 1;
  const shadowOn = s.shadowOpacity > 0;
  return {
    width: longest * MAX_EM_PER_CHAR * fontPx,
    height: lines.length * MAX_EM_PER_LINE * fontPx,
    beyond: { x: shadowOn ? Math.abs(s.shadowOffsetX) * fontPx : 0, y: shadowOn ? Math.abs(s.shadowOffsetY) * fontPx : 0 },
    what: 'text',
  };
}

const imageBox = (size: { width: number; height: number }): Box => ({ ...size, beyond: { x: 0, y: 0 }, what: 'image' });

function offFrameIssue(s: VisibleSetting, box: Box, frame: Frame, at: string): string | undefined {
  const range = {
    x: visibleRange(frame.width, box.width, H_FACTOR[s.align], box.beyond.x),
    y: visibleRange(frame.height, box.height, V_FACTOR[s.verticalAlign], box.beyond.y),
  };
  // How far the animation gets within the video: it starts at (x, y) and stops at (toX, toY) or where the video ends.
  const a: MoveAnimation | undefined = s.animation;
  let reach = 0;
  if (a) {
    const duration = frame.duration ?? Number.POSITIVE_INFINITY;
    reach = Math.min(1, Math.max(0, (duration - a.startTime) / (a.endTime - a.startTime)));
  }
  const to = { x: a ? s.x + (a.toX - s.x) * reach : s.x, y: a ? s.y + (a.toY - s.y) * reach : s.y };
  const sx = insideSpan(s.x, to.x, range.x);
  const sy = insideSpan(s.y, to.y, range.y);
  if (sx && sy && Math.max(sx[0], sy[0]) < Math.min(sx[1], sy[1])) return undefined;

  const moving = a !== undefined && (a.toX !== s.x || a.toY !== s.y) && reach > 0;
  const field = !sx ? 'x' : !sy ? 'y' : 'animation';
  const where = moving
    ? `moves from (x ${s.x}, y ${s.y}) to (x ${to.x}, y ${to.y}) entirely outside the frame`
    : `at x ${s.x}, y ${s.y} lies wholly outside the frame${a ? ' for the whole video (the animation starts after it ends)' : ''}`;
  return `${at}.${field}: the ${box.what} ${where}, so nothing would be drawn; x and y are fractions of the frame (0..1 is inside: 0 the left/top edge, 1 the right/bottom), anchoring the ${box.what} by align/verticalAlign`;
}
